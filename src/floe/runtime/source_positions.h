#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <map>
#include <optional>
#include <set>
#include <string>

#include "floe/common/mutex.h"
#include "floe/runtime/ids.h"

namespace floe::runtime {

// SourcePositionBoard carries source positions to the sinks that commit them, inside one
// worker process. A source subtask records its position (a JSON text the source defines, e.g.
// {"next_seq":1235} or {"file":"/in/a.jsonl","offset":4096,"line":57}) in SnapshotPosition(N);
// the barrier it then emits reaches a committer only after every source recorded N, so a
// committer's OnBarrier(N) sees all positions of N. The committer stores them with pending[N]
// and writes them into the snapshot summary (floe.source-offsets).
// Start overrides: when a restore finds the table AHEAD of the restored checkpoint, the
// positions the table holds replace the restored ones: sources ask StartOverride(task) after
// Restore and, if set, start there.
// Committed-by-sinks: a source that also commits its positions somewhere outside the job (the
// Kafka source's group offsets) must not publish checkpoint N's positions before the sinks made
// N's output visible, or a fresh job started from those positions skips records that were never
// committed. So every committing sink subtask (the Iceberg committer, an exactly-once Kafka sink
// subtask) registers in Open (RegisterCommitter) and reports ReportCommitted(N) once everything
// of checkpoints <= N is committed (also when there was nothing to commit, or the commit was
// found already done); Close reports it is gone (ReportClosed). A source publishes N only when
// CommittedByAll() >= N; with no committer registered (print, blackhole, at-least-once Kafka
// sinks: nothing left to commit after a checkpoint completes), CommittedByAll() is nullopt and
// the source publishes at completion.
// Thread-safe. Shared by the operators of one job run (shared_ptr captured by factories).
class SourcePositionBoard {
 public:
  void Record(CheckpointId id, const std::string& task, std::string position_json);
  // Every task's position recorded for checkpoint `id` (task name -> position JSON).
  std::map<std::string, std::string> PositionsAt(CheckpointId id) const;
  // Drops positions of checkpoints <= id (they were committed or subsumed).
  void ForgetUpTo(CheckpointId id);

  void SetStartOverrides(std::map<std::string, std::string> positions);
  std::optional<std::string> StartOverride(const std::string& task) const;

  // A committing sink subtask `name` (a task name) takes part; it keeps what it reported in an
  // earlier run of the same job (a restart reopens it).
  void RegisterCommitter(const std::string& name);
  // `name` committed everything of checkpoints <= id.
  void ReportCommitted(const std::string& name, CheckpointId id);
  // `name` closed: it reports nothing more until it registers again.
  void ReportClosed(const std::string& name);
  // The highest checkpoint id every registered committer reported; nullopt when none registered.
  std::optional<uint64_t> CommittedByAll() const;
  // Waits until CommittedByAll() >= id (true; also true when none is registered), or returns
  // false once `timeout` passed, *cancel became true, or a committer that has not reached `id`
  // closed (it never will).
  bool WaitCommittedByAll(CheckpointId id, std::chrono::milliseconds timeout,
                          const std::atomic<bool>* cancel) const;
  // Threads inside WaitCommittedByAll that have not seen their checkpoint committed: lets a test
  // see a wait happen instead of sleeping.
  int waiting() const;

  // Scale-out: a committer found that the table fenced the rows of source split `split` (a
  // claim of a partition, connectors/partition_claims.h); the source holding it reads the
  // partition again from the table's position. TakeFenced returns and forgets the reports.
  void ReportFenced(std::string split);
  std::set<std::string> TakeFenced();

 private:
  struct Committer {
    uint64_t committed = 0;
    bool closed = false;
  };
  mutable Mutex mu_;
  mutable std::condition_variable committed_cv_;
  std::map<std::string, Committer> committers_ FLOE_GUARDED_BY(mu_);
  std::map<CheckpointId, std::map<std::string, std::string>> positions_ FLOE_GUARDED_BY(mu_);
  std::map<std::string, std::string> overrides_ FLOE_GUARDED_BY(mu_);
  std::set<std::string> fenced_ FLOE_GUARDED_BY(mu_);
  mutable int waiting_ FLOE_GUARDED_BY(mu_) = 0;
};

}  // namespace floe::runtime
