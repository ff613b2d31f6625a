#pragma once

#include <string>
#include <vector>

namespace floe::kafka {

// The configuration property names this librdkafka knows, global and topic-level, aliases
// included ("bootstrap.servers", "group.id", "auto.offset.reset", ...), read once from
// rd_kafka_conf_properties_show. For suggesting the intended name when librdkafka refuses a
// misspelled one. Thread-safe.
const std::vector<std::string>& KnownPropertyNames();

}  // namespace floe::kafka
