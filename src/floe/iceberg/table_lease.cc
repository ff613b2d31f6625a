#include "floe/iceberg/table_lease.h"

#include <algorithm>
#include <chrono>
#include <random>

#include <nlohmann/json.hpp>

#include "floe/common/json.h"
#include "floe/common/log.h"
#include "floe/iceberg/catalog.h"
#include "floe/iceberg/commit_internal.h"
#include "floe/io/file.h"

namespace floe::iceberg {
namespace {

constexpr int kLeaseFormat = 1;

std::string SafeName(const std::string& text) {
  std::string out;
  for (char c : text.substr(0, 100)) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                    c == '-' || c == '_' || c == '.';
    out.push_back(ok ? c : '_');
  }
  return out.empty() ? "lease" : out;
}

std::string RandomToken() {
  std::mt19937_64 rng(std::random_device{}());
  char hex[17];
  std::snprintf(hex, sizeof(hex), "%016llx", static_cast<unsigned long long>(rng()));
  return hex;
}

// A path as a listing of the location shows it: local absolute paths, s3:// URIs as they are.
std::string Normalized(const std::string& uri_or_path) {
  if (uri_or_path.rfind("file:", 0) != 0) return uri_or_path;
  Result<std::string> local = UriToPath(uri_or_path);
  return local.ok() ? *local : uri_or_path;
}

// Whether `outer` covers everything `inner` claims.
bool CoversClaim(const LeaseClaim& outer, const LeaseClaim& inner) {
  if (inner.since_ms && (!outer.since_ms || *outer.since_ms > *inner.since_ms)) return false;
  return std::includes(outer.paths.begin(), outer.paths.end(), inner.paths.begin(),
                       inner.paths.end());
}

// One lease file's claim and ttl; errors name the file and the field.
Status ParseLease(const std::string& text, const std::string& file, LeaseClaim* claim,
                  int64_t* ttl_ms) {
  const JsonPath at("lease " + file);
  FLOE_ASSIGN_OR_RAISE(Json j, ParseJson(text, at));
  JsonObject<Json> o(j, at);
  int format = 0;
  FLOE_RETURN_NOT_OK(o.Required("format", &format));
  if (format != kLeaseFormat) {
    return o.Error("format", "unknown lease format " + std::to_string(format));
  }
  FLOE_RETURN_NOT_OK(o.Required("ttl-ms", ttl_ms));
  if (*ttl_ms < 1 || *ttl_ms > kLeaseTtlMsMax) {
    return o.Error("ttl-ms", "must be in 1.." + std::to_string(kLeaseTtlMsMax) + ", got " +
                                 std::to_string(*ttl_ms));
  }
  FLOE_RETURN_NOT_OK(o.Get("since-ms", &claim->since_ms));
  if (claim->since_ms && *claim->since_ms < 0) {
    return o.Error("since-ms", "must not be negative, got " + std::to_string(*claim->since_ms));
  }
  std::vector<std::string> paths;
  FLOE_RETURN_NOT_OK(o.Get("paths", &paths));
  for (const std::string& p : paths) claim->paths.insert(Normalized(p));
  return Status::OK();
}

}  // namespace

std::string LeaseDirectory(const std::string& location) {
  return io::JoinPath(io::JoinPath(location, "metadata"), kLeaseDirName);
}

TableLease::TableLease(std::string holder, int64_t ttl_ms)
    : holder_(SafeName(holder)), ttl_ms_(std::clamp<int64_t>(ttl_ms, 1, kLeaseTtlMsMax)) {}

TableLease::~TableLease() {
  {
    MutexLock lock(mu_);
    stop_ = true;
  }
  wake_.notify_all();
  if (refresher_.joinable()) refresher_.join();
  MutexLock lock(mu_);
  if (!path_.empty()) (void)file_io_.RemoveFile(path_);
}

Status TableLease::Open(const io::FileIO& file_io, const TableMetadata& metadata) {
  MutexLock lock(mu_);
  if (!path_.empty()) return Status::OK();
  FLOE_ASSIGN_OR_RAISE(std::string location, UriToPath(metadata.location));
  const std::string dir = LeaseDirectory(location);
  FLOE_RETURN_NOT_OK(file_io.CreateDirs(dir));
  file_io_ = file_io;
  path_ = io::JoinPath(dir, holder_ + "-" + RandomToken() + ".json");
  Status st = WriteLocked();
  if (!st.ok()) {
    path_.clear();
    return st.WithContext("table lease");
  }
  refresher_ = std::thread([this] { RefreshLoop(); });
  return Status::OK();
}

Status TableLease::Claim(const std::string& key, LeaseClaim claim) {
  MutexLock lock(mu_);
  if (path_.empty()) return Status::Internal("table lease '" + holder_ + "' claimed before Open");
  std::set<std::string> paths;
  for (const std::string& p : claim.paths) paths.insert(Normalized(p));
  claim.paths = std::move(paths);
  const bool widens = !CoversClaim(written_, claim);
  claims_[key] = std::move(claim);
  return widens ? WriteLocked() : Status::OK();
}

void TableLease::Release(const std::string& key) {
  MutexLock lock(mu_);
  claims_.erase(key);
}

std::string TableLease::path() const {
  MutexLock lock(mu_);
  return path_;
}

Status TableLease::WriteLocked() {
  LeaseClaim all;
  for (const auto& [key, c] : claims_) {
    if (c.since_ms && (!all.since_ms || *c.since_ms < *all.since_ms)) all.since_ms = c.since_ms;
    all.paths.insert(c.paths.begin(), c.paths.end());
  }
  Json j = Json::object();
  j["format"] = kLeaseFormat;
  j["holder"] = holder_;
  j["ttl-ms"] = ttl_ms_;
  j["since-ms"] = all.since_ms ? Json(*all.since_ms) : Json(nullptr);
  j["paths"] = Json::array();
  for (const std::string& p : all.paths) j["paths"].push_back(p);
  FLOE_RETURN_NOT_OK(file_io_.WriteFileReplace(path_, DumpJson(j)));
  written_ = std::move(all);
  return Status::OK();
}

void TableLease::RefreshLoop() {
  const auto period = std::chrono::milliseconds(std::max<int64_t>(1, ttl_ms_ / 5));
  MutexLock lock(mu_);
  for (;;) {
    const auto next = std::chrono::steady_clock::now() + period;
    while (!stop_) {
      if (wake_.wait_until(lock.native(), next) == std::cv_status::timeout) break;
    }
    if (stop_) return;
    Status st = WriteLocked();
    if (!st.ok()) {
      LogWarn(
          "table lease %s: refresh failed (orphan removal may take this work for orphans "
          "once the lease is %lld ms old): %s",
          path_.c_str(), static_cast<long long>(ttl_ms_), st.ToString().c_str());
    }
  }
}

Result<LiveLeases> LiveLeases::Read(const io::FileIO& file_io, const std::string& location,
                                    int64_t now_ms) {
  LiveLeases out;
  out.dir_ = LeaseDirectory(location);
  out.now_ms_ = now_ms;
  FLOE_ASSIGN_OR_RAISE(std::vector<io::FileEntry> files, file_io.ListFilesRecursive(out.dir_));
  for (const io::FileEntry& f : files) {
    if (f.path.size() < 5 || f.path.compare(f.path.size() - 5, 5, ".json") != 0) continue;
    if (now_ms - f.mtime_ms > kLeaseTtlMsMax) {
      out.dead_.insert(f.path);
      continue;
    }
    Result<uint64_t> size = file_io.FileSize(f.path);
    if (!size.ok() && size.status().IsNotFound()) continue;  // released meanwhile
    FLOE_RETURN_NOT_OK(size.status());
    if (*size > kLeaseMaxBytes) {
      return Status::Corruption("lease " + f.path + ": " + std::to_string(*size) +
                                " bytes, more than the " + std::to_string(kLeaseMaxBytes) +
                                " a lease may have");
    }
    Result<std::string> text = file_io.ReadFile(f.path);
    if (!text.ok() && text.status().IsNotFound()) continue;
    FLOE_RETURN_NOT_OK(text.status());
    LeaseClaim claim;
    int64_t ttl_ms = 0;
    FLOE_RETURN_NOT_OK(ParseLease(*text, f.path, &claim, &ttl_ms));
    if (now_ms - f.mtime_ms > ttl_ms) {
      out.dead_.insert(f.path);
      continue;
    }
    ++out.live_;
    if (claim.since_ms && (!out.since_ms_ || *claim.since_ms < *out.since_ms_)) {
      out.since_ms_ = claim.since_ms;
    }
    out.paths_.insert(claim.paths.begin(), claim.paths.end());
  }
  return out;
}

bool LiveLeases::Covers(const io::FileEntry& file) const {
  if (file.path.rfind(dir_ + "/", 0) == 0) {
    return dead_.count(file.path) == 0 && now_ms_ - file.mtime_ms <= kLeaseTtlMsMax;
  }
  if (paths_.count(file.path) > 0) return true;
  return since_ms_ && file.mtime_ms >= *since_ms_ - kLeaseClockSkewMs;
}

}  // namespace floe::iceberg
