#pragma once

#include <cstdint>
#include <string>
#include <variant>

#include "floe/common/record_batch.h"
#include "floe/runtime/ids.h"

namespace floe::runtime {

// Barrier N separates the records that belong to checkpoint N (before it) from those that
// belong to N+1 (after it). Sources inject it; every task forwards it once it snapshotted.
struct Barrier {
  CheckpointId id;
  bool is_savepoint = false;
  bool operator==(const Barrier&) const = default;
};

// The last element a channel carries data-wise: its producer will send no more batches or
// watermarks. Barriers may still follow (a finished bounded job takes a final checkpoint).
struct EndOfInput {
  bool operator==(const EndOfInput&) const = default;
};

// Flink's WatermarkStatus: an idle producer (a source with no partition, or whose partitions sent
// nothing for the idle timeout) does not hold back the watermark of the tasks it feeds. A
// watermark or a batch from it makes it active again.
struct WatermarkStatus {
  bool idle = false;
  bool operator==(const WatermarkStatus&) const = default;
};

// A partition changed hands in a keyed job scaled out by Kafka partition (docs/architecture.md,
// "Keyed jobs"). The source sends it in order with its rows: ahead of a claim's first row, and
// when the group takes the partition away. A keyed task's runtime moves the key group (the
// partition's state) before the operator sees it, so no row of the claim meets the wrong state.
struct ClaimChange {
  std::string split;       // the claim's split name: kSourceSplitColumn of its rows
  uint32_t key_group = 0;  // the partition, the key group its rows' state lives in
  bool begins = true;      // false: the claim ended (its partition revoked or lost)
  // begins: where the partition's last committed state lies (ExecutorOptions::read_claim_state
  // reads it); "": none, the group starts empty.
  std::string state;
  bool operator==(const ClaimChange&) const = default;
};

// What flows through channels: data and the control events that must stay in order with it.
using StreamElement =
    std::variant<RecordBatch, Barrier, Watermark, EndOfInput, WatermarkStatus, ClaimChange>;

}  // namespace floe::runtime
