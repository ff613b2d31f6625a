#include "floe/kafka/property_names.h"

#include <librdkafka/rdkafka.h>

#include <cstdio>
#include <cstdlib>
#include <string_view>

namespace floe::kafka {

namespace {

// Rows of rd_kafka_conf_properties_show's tables start with the property name, then '|':
//   bootstrap.servers                        |  *  |  ...
// Headers ("Property ..."), separators ("----|...") and section titles are skipped.
std::vector<std::string> ParseProperties(std::string_view text) {
  std::vector<std::string> names;
  while (!text.empty()) {
    size_t eol = text.find('\n');
    std::string_view line = text.substr(0, eol);
    text.remove_prefix(eol == std::string_view::npos ? text.size() : eol + 1);
    size_t bar = line.find('|');
    if (bar == std::string_view::npos) continue;
    std::string_view name = line.substr(0, bar);
    while (!name.empty() && name.back() == ' ') name.remove_suffix(1);
    bool ok = !name.empty() && name[0] >= 'a' && name[0] <= 'z';
    for (char c : name) {
      ok = ok &&
           ((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '.' || c == '_' || c == '-');
    }
    if (ok) names.emplace_back(name);
  }
  return names;
}

std::vector<std::string> ReadProperties() {
  char* buffer = nullptr;
  size_t size = 0;
  FILE* out = open_memstream(&buffer, &size);
  if (out == nullptr) return {};
  rd_kafka_conf_properties_show(out);
  std::fclose(out);
  std::vector<std::string> names = ParseProperties(std::string_view(buffer, size));
  std::free(buffer);
  return names;
}

}  // namespace

const std::vector<std::string>& KnownPropertyNames() {
  static const std::vector<std::string> kNames = ReadProperties();
  return kNames;
}

}  // namespace floe::kafka
