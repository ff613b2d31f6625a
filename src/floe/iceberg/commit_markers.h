#pragma once

// The snapshot-summary keys of floe's commit marker (docs/exactly-once.md "Snapshot summary
// keys"), defined once: the sink writes them, restore and `floe table snapshots` read them, and
// snapshot expiry keeps the snapshots that carry kSummarySinkId. Renaming one is a format change.
namespace floe::iceberg {

inline constexpr const char* kSummarySinkId = "floe.sink-id";
inline constexpr const char* kSummaryJobId = "floe.job-id";
inline constexpr const char* kSummaryCheckpointId = "floe.checkpoint-id";
inline constexpr const char* kSummarySourceOffsets = "floe.source-offsets";
inline constexpr const char* kSummaryPipeline = "floe.pipeline";
inline constexpr const char* kSummaryWatermark = "floe.watermark";

}  // namespace floe::iceberg
