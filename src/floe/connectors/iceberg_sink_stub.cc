// Stand-in for the Iceberg sink while iceberg_sink.cc is not in the tree (CMakeLists.txt builds
// this file only then): the planner links, and a job with an iceberg table fails at plan time
// with NotImplemented instead of at link time.
#include "floe/connectors/iceberg_sink.h"

namespace floe::connectors {
namespace {

Status Unavailable() {
  return Status::NotImplemented("the iceberg sink is not built into this floe binary yet");
}

}  // namespace

Status PrepareIcebergTable(const IcebergSinkSpec&) { return Unavailable(); }

Status AddIcebergSink(runtime::JobGraph&, runtime::VertexId, const IcebergSinkSpec&,
                      const JobContext&) {
  return Unavailable();
}

Result<SinkRestorePlan> PlanIcebergSinkRestore(const IcebergSinkSpec&,
                                               const std::optional<runtime::CompletedCheckpoint>&,
                                               StaleRestorePolicy, bool) {
  return Unavailable();
}

}  // namespace floe::connectors
