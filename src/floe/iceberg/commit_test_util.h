#pragma once

// Test-only helpers shared by manifest_io_test.cc and snapshot_update_test.cc.

#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "floe/common/status.h"
#include "floe/iceberg/catalog.h"

#ifndef FLOE_ASSERT_OK
#define FLOE_ASSERT_OK(expr)                                  \
  do {                                                        \
    ::floe::Status _st = (expr);                              \
    ASSERT_TRUE(_st.ok()) << #expr << ": " << _st.ToString(); \
  } while (false)
#endif

#ifndef FLOE_ASSERT_OK_AND_ASSIGN
#define FLOE_ASSERT_OK_AND_ASSIGN(lhs, rexpr)                                 \
  auto FLOE_CONCAT_(_res_, __LINE__) = (rexpr);                               \
  ASSERT_TRUE(FLOE_CONCAT_(_res_, __LINE__).ok())                             \
      << #rexpr << ": " << FLOE_CONCAT_(_res_, __LINE__).status().ToString(); \
  lhs = std::move(FLOE_CONCAT_(_res_, __LINE__)).value()
#endif

namespace floe::iceberg::commit_testing {

// A fresh directory under $TEST_TMPDIR or /tmp, removed on destruction.
class ScratchDir {
 public:
  ScratchDir() {
    const char* base = getenv("TEST_TMPDIR");
    std::string tmpl = std::string(base ? base : "/tmp") + "/floe-icecommit-XXXXXX";
    std::vector<char> buf(tmpl.begin(), tmpl.end());
    buf.push_back('\0');
    char* made = mkdtemp(buf.data());
    path_ = made ? made : "";
  }
  ~ScratchDir() {
    std::error_code ec;
    if (!path_.empty()) std::filesystem::remove_all(path_, ec);
  }
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

// Names of the files in `dir` ending in `suffix`.
inline std::vector<std::string> FilesEndingWith(const std::string& dir, const std::string& suffix) {
  std::vector<std::string> out;
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator(dir, ec)) {
    std::string name = e.path().filename().string();
    if (name.size() >= suffix.size() &&
        name.compare(name.size() - suffix.size(), suffix.size(), suffix) == 0) {
      out.push_back(name);
    }
  }
  return out;
}

// What an append does to the metadata: snapshot `snapshot_id` (summary `summary` plus the
// operation) becomes current on main. Enough for catalog tests, which never read the manifest
// list it names.
inline TableMetadata WithSnapshot(const TableMetadata& base, int64_t snapshot_id,
                                  std::map<std::string, std::string> summary = {}) {
  TableMetadata md = base;
  Snapshot s;
  s.snapshot_id = snapshot_id;
  s.parent_snapshot_id = base.current_snapshot_id;
  s.sequence_number = base.last_sequence_number + 1;
  s.timestamp_ms = 1700000000000 + snapshot_id;
  s.manifest_list = base.location + "/metadata/snap-" + std::to_string(snapshot_id) + ".avro";
  s.summary = std::move(summary);
  s.summary["operation"] = "append";
  md.snapshots.push_back(s);
  md.last_sequence_number = s.sequence_number;
  md.SetMain(snapshot_id);
  md.snapshot_log.push_back({s.timestamp_ms, snapshot_id});
  return md;
}

// Commits snapshot `snapshot_id` to `id`, reloading and re-applying on Conflict.
inline Status CommitWithRetry(Catalog& catalog, const TableIdentifier& id, int64_t snapshot_id,
                              int* conflicts = nullptr) {
  for (int attempt = 0; attempt < 1000; ++attempt) {
    FLOE_ASSIGN_OR_RAISE(LoadedTable base, catalog.LoadTable(id));
    Result<LoadedTable> r = catalog.CommitTable(base, WithSnapshot(base.metadata, snapshot_id));
    if (r.ok()) return Status::OK();
    if (!r.status().IsConflict()) return r.status();
    if (conflicts != nullptr) ++*conflicts;
  }
  return Status::Internal("too many conflicts");
}

// Forks `processes` children; child i opens its own catalog with `open` and commits snapshots
// 1000 * (i + 1) + c for c < `commits_each` with CommitWithRetry. Returns how many children
// failed.
inline int ForkCommitters(int processes, int commits_each, const TableIdentifier& id,
                          const std::function<Result<std::unique_ptr<Catalog>>()>& open) {
  std::vector<pid_t> pids;
  for (int i = 0; i < processes; ++i) {
    pid_t pid = ::fork();
    if (pid < 0) return processes;
    if (pid == 0) {
      Result<std::unique_ptr<Catalog>> catalog = open();
      if (!catalog.ok()) ::_exit(3);
      for (int c = 0; c < commits_each; ++c) {
        if (!CommitWithRetry(**catalog, id, 1000 * (i + 1) + c).ok()) ::_exit(2);
      }
      ::_exit(0);
    }
    pids.push_back(pid);
  }
  int failed = 0;
  for (pid_t pid : pids) {
    int status = 0;
    if (::waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
      ++failed;
    }
  }
  return failed;
}

// Forwards to a real catalog; `before_commit` runs before each CommitTable (to commit
// concurrently), `fail_commits` makes CommitTable answer Conflict without committing, a
// non-OK `commit_error` is returned instead of committing (a catalog whose database is lost).
class InterposedCatalog final : public Catalog {
 public:
  explicit InterposedCatalog(Catalog* inner) : inner_(inner) {}
  Result<LoadedTable> CreateTable(const TableIdentifier& id, const Schema& schema,
                                  const PartitionSpec& spec,
                                  std::map<std::string, std::string> properties) override {
    return inner_->CreateTable(id, schema, spec, std::move(properties));
  }
  Result<LoadedTable> LoadTable(const TableIdentifier& id) override {
    ++loads;
    return inner_->LoadTable(id);
  }
  Result<LoadedTable> CommitTable(const LoadedTable& base, TableMetadata updated) override {
    ++commits;
    if (before_commit) before_commit(commits);
    if (fail_commits) return Status::Conflict("injected conflict");
    if (!commit_error.ok()) return commit_error;
    return inner_->CommitTable(base, std::move(updated));
  }
  Result<std::vector<TableIdentifier>> ListTables(const std::string& ns) override {
    return inner_->ListTables(ns);
  }
  Status DropTable(const TableIdentifier& id, bool purge) override {
    return inner_->DropTable(id, purge);
  }
  Status CreateNamespace(const std::string& ns,
                         const std::map<std::string, std::string>& properties) override {
    return inner_->CreateNamespace(ns, properties);
  }
  Result<std::map<std::string, std::string>> LoadNamespace(const std::string& ns) override {
    return inner_->LoadNamespace(ns);
  }
  Result<std::vector<std::string>> ListNamespaces() override { return inner_->ListNamespaces(); }
  std::string DefaultTableLocation(const TableIdentifier& id) const override {
    return inner_->DefaultTableLocation(id);
  }
  const io::FileIO& file_io() const override { return inner_->file_io(); }

  std::function<void(int)> before_commit;
  bool fail_commits = false;
  Status commit_error;
  int loads = 0;
  int commits = 0;

 private:
  Catalog* inner_;
};

}  // namespace floe::iceberg::commit_testing
