#pragma once

#include <string>
#include <vector>

#include "floe/common/status.h"

namespace floe::cli {

// `floe kafka dev|produce|consume|offsets ...`: a mock Kafka cluster for development and tests
// (fault injection commands on its stdin), a JSON-lines producer, a consumer printing one JSON
// line per record, and the group offsets of a topic (docs/kafka.md).
Status RunKafkaCommand(const std::vector<std::string>& args);

}  // namespace floe::cli
