#pragma once

// Leases: how a process writing a table tells orphan removal (any process's, with any
// --older-than) which files in the table's location are work in progress. A data file a job
// writes is referenced by no snapshot until its checkpoint commits; without a lease a sweep
// with a short interval takes it for an orphan and the commit then references a missing file.
//
// A lease is one JSON file, <location>/metadata/floe-leases/<holder>-<token>.json:
//   {"format": 1, "holder": "...", "ttl-ms": N, "since-ms": N or null, "paths": ["...", ...]}
// It covers every file in the table's location last modified at or after since-ms (less
// kLeaseClockSkewMs: the holder's clock against the store's), so files being written whose
// names nobody knows yet (open data files, manifests of a commit, a compaction's output), and
// every file `paths` names (files staged for a commit whatever their age). It is live while its
// file is younger than ttl-ms (the holder rewrites it every ttl/5); a dead lease covers nothing.

#include <condition_variable>
#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <thread>

#include "floe/common/mutex.h"
#include "floe/common/status.h"
#include "floe/iceberg/table_metadata.h"
#include "floe/io/file_io.h"

namespace floe::iceberg {

inline constexpr char kLeaseDirName[] = "floe-leases";  // under <location>/metadata/
inline constexpr int64_t kLeaseTtlMsDefault = 5 * 60 * 1000;
inline constexpr int64_t kLeaseTtlMsMax = 24LL * 60 * 60 * 1000;
inline constexpr int64_t kLeaseClockSkewMs = 60 * 1000;
inline constexpr uint64_t kLeaseMaxBytes = 64ULL << 20;

// <location>/metadata/floe-leases (location: a local path or an s3:// URI).
std::string LeaseDirectory(const std::string& location);

// What one holder claims: files modified at or after since_ms, and files named in paths
// (URIs or paths as the table's manifests name them).
struct LeaseClaim {
  std::optional<int64_t> since_ms;
  std::set<std::string> paths;
};

// TableLease keeps one lease file for a process's work on one table, as several keyed claims
// (a sink's writer subtasks, its committer, its compaction). Claim writes the file before it
// returns whenever the claim widens what the file covers, so a file created after Claim is
// covered from its first byte; Release narrows it at the next refresh. A background thread
// rewrites the file every ttl/5; the destructor stops it and removes the file.
// Thread-safe. Lifecycle: construct, Open (once per table; later calls are no-ops), Claim /
// Release, destroy.
class TableLease {
 public:
  // `holder` names the file (letters, digits, '-', '_', '.'; others become '_').
  explicit TableLease(std::string holder, int64_t ttl_ms = kLeaseTtlMsDefault);
  ~TableLease();
  TableLease(const TableLease&) = delete;
  TableLease& operator=(const TableLease&) = delete;

  // Starts the lease in the location of `metadata`'s table, through `file_io`.
  Status Open(const io::FileIO& file_io, const TableMetadata& metadata);
  // Sets `key`'s claim. REQUIRES: Open succeeded.
  Status Claim(const std::string& key, LeaseClaim claim);
  void Release(const std::string& key);
  // The lease file ("" before Open).
  std::string path() const;

 private:
  Status WriteLocked() FLOE_REQUIRES(mu_);
  void RefreshLoop() FLOE_EXCLUDES(mu_);

  const std::string holder_;
  const int64_t ttl_ms_;
  mutable Mutex mu_;
  std::condition_variable wake_;
  bool stop_ FLOE_GUARDED_BY(mu_) = false;
  io::FileIO file_io_ FLOE_GUARDED_BY(mu_);
  std::string path_ FLOE_GUARDED_BY(mu_);
  std::map<std::string, LeaseClaim> claims_ FLOE_GUARDED_BY(mu_);
  LeaseClaim written_ FLOE_GUARDED_BY(mu_);  // what the file says now
  std::thread refresher_;
};

// The live leases of a table, as orphan removal reads them.
class LiveLeases {
 public:
  // Reads every lease under `location` (a local path or an s3:// URI). A lease older than its
  // ttl is dead. A live lease that cannot be read, is larger than kLeaseMaxBytes or does not
  // parse is an error naming the file and the field: a sweep that cannot tell what is in use
  // deletes nothing.
  static Result<LiveLeases> Read(const io::FileIO& file_io, const std::string& location,
                                 int64_t now_ms);
  // Whether a file of the table's location is covered by a live lease, or is a lease file that
  // is not dead (a live lease, one being replaced, or one younger than kLeaseTtlMsMax that
  // could not be judged).
  bool Covers(const io::FileEntry& file) const;
  size_t live() const { return live_; }

 private:
  std::string dir_;
  size_t live_ = 0;
  std::optional<int64_t> since_ms_;  // the oldest since-ms of a live lease
  std::set<std::string> paths_;      // local absolute paths and s3:// URIs
  std::set<std::string> dead_;       // lease files that are dead
  int64_t now_ms_ = 0;
};

}  // namespace floe::iceberg
