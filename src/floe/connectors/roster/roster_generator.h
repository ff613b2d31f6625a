#pragma once

#include <cstdint>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "floe/common/record_batch.h"

namespace floe::connectors {

// Options of the study's provider-roster workload ('connector' = 'roster').
struct RosterOptions {
  uint64_t seed = 42;
  int64_t providers = 2000;
  int64_t events = 12000;
  int64_t sources = 4;
};

// RosterGenerator produces the reference study's workload: `providers` providers (NPIs) about
// whom `sources` sources make `events` assertions. Events arrive out of event-time order;
// each later assertion about an NPI carries a higher revision (a correction of the earlier
// row). The feed is a pure function of the options and prefix-stable: event i depends only
// on the seed, `providers`, `sources` and events before it, so raising `events` appends.
// Not thread-safe; cheap to construct; position is the next seq to produce.
class RosterGenerator {
 public:
  explicit RosterGenerator(RosterOptions options);

  // seq BIGINT NOT NULL, npi STRING NOT NULL, source STRING NOT NULL, revision INT NOT NULL,
  // event_time TIMESTAMP(3) NOT NULL, first_name, last_name, specialty, state, city, zip,
  // phone STRING, active BOOLEAN; field ids 1..13.
  static std::shared_ptr<const BatchSchema> Schema();
  // The same columns in Flink SQL, for `floe table create --schema`.
  static const char* FlinkColumns();

  // Next up to `max_rows` events (fewer at the end; empty when done).
  RecordBatch Next(size_t max_rows);
  // Fast-forwards so the next event produced is `seq` (clamped to events + 1), drawing the same
  // random numbers Next would but building no rows: Next after SkipTo(n) returns exactly what
  // it would have returned after producing seqs 1..n-1. REQUIRES: seq >= next_seq().
  void SkipTo(int64_t seq);
  int64_t next_seq() const { return next_seq_; }
  bool done() const { return next_seq_ > options_.events; }

 private:
  RosterOptions options_;
  std::mt19937_64 rng_;
  int64_t next_seq_ = 1;
  std::vector<int32_t> revisions_;  // per provider: assertions made so far
};

}  // namespace floe::connectors
