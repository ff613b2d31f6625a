#pragma once

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

// What flows through channels: data and the control events that must stay in order with it.
using StreamElement = std::variant<RecordBatch, Barrier, Watermark, EndOfInput, WatermarkStatus>;

}  // namespace floe::runtime
