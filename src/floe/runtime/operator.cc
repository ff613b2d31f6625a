#include "floe/runtime/operator.h"

namespace floe::runtime {

namespace {

Status RefuseRescale(size_t old_parallelism) {
  return Status::InvalidArgument(
      "its state cannot be split or merged over another parallelism; restore with the "
      "parallelism the snapshot was taken with (" +
      std::to_string(old_parallelism) + ")");
}

}  // namespace

Status Operator::RestoreRescaled(const std::vector<std::string>& states) {
  return RefuseRescale(states.size());
}

Status SourceOperator::RestoreRescaled(const std::vector<std::string>& states) {
  return RefuseRescale(states.size());
}

}  // namespace floe::runtime
