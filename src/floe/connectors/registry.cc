#include "floe/connectors/registry.h"

#include <algorithm>

#include "floe/connectors/filesystem/filesystem_source.h"
#include "floe/connectors/iceberg/iceberg_sink.h"
#include "floe/connectors/kafka/kafka_source.h"
#include "floe/connectors/print/print_sink.h"
#include "floe/connectors/roster/roster_source.h"

namespace floe::connectors {
Status ConnectorRegistry::Register(Connector connector) {
  if (Find(connector.name) != nullptr) {
    return Status::AlreadyExists("connector '" + connector.name + "' is registered twice");
  }
  connectors_.push_back(std::move(connector));
  return Status::OK();
}

const Connector* ConnectorRegistry::Find(std::string_view name) const {
  for (const Connector& c : connectors_) {
    if (c.name == name) return &c;
  }
  return nullptr;
}

std::string ConnectorRegistry::NamesWhere(bool (*keep)(const Connector&)) const {
  std::vector<std::string> names;
  for (const Connector& c : connectors_) {
    if (keep(c)) names.push_back(c.name);
  }
  std::sort(names.begin(), names.end());
  std::string out;
  for (const std::string& n : names) out += (out.empty() ? "'" : ", '") + n + "'";
  return out;
}

std::string ConnectorRegistry::Names() const {
  return NamesWhere([](const Connector&) { return true; });
}
std::string ConnectorRegistry::SourceNames() const {
  return NamesWhere([](const Connector& c) { return static_cast<bool>(c.add_source); });
}
std::string ConnectorRegistry::SinkNames() const {
  return NamesWhere([](const Connector& c) { return static_cast<bool>(c.add_sink); });
}
std::string ConnectorRegistry::ChangelogSinkNames() const {
  return NamesWhere(
      [](const Connector& c) { return c.add_sink && static_cast<bool>(c.accepts_changelog); });
}

const ConnectorRegistry& BuiltinConnectors() {
  static const ConnectorRegistry registry = [] {
    ConnectorRegistry r;
    for (Connector c : {RosterConnector(), FilesystemConnector(), KafkaConnector(),
                        PrintConnector(), BlackholeConnector(), IcebergConnector()}) {
      Status st = r.Register(std::move(c));
      (void)st;  // names above are distinct (registry_test checks)
    }
    return r;
  }();
  return registry;
}

}  // namespace floe::connectors
