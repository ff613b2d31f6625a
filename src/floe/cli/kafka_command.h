#pragma once

#include <string>
#include <vector>

#include "floe/common/status.h"

namespace floe::cli {

// `floe kafka dev|produce|offsets ...`: a mock Kafka cluster for development and tests, a
// JSON-lines producer, and the group offsets of a topic (docs/kafka.md).
Status RunKafkaCommand(const std::vector<std::string>& args);

}  // namespace floe::cli
