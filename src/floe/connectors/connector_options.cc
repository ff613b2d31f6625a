#include "floe/connectors/connector_options.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <vector>

namespace floe::connectors {

std::string OptionError(const TableDescriptor& table, std::string_view key, std::string_view rule,
                        std::string_view value) {
  std::string msg = "table '" + table.name + "': option '" + std::string(key) + "' " +
                    std::string(rule) + ", got '" + std::string(value) + "'";
  return msg;
}

Status CheckSupportedOptions(const TableDescriptor& table, std::string_view connector,
                             const std::vector<std::string>& supported) {
  std::vector<std::string> unknown;
  for (const auto& [key, value] : table.options) {
    if (key == "connector") continue;
    if (std::find(supported.begin(), supported.end(), key) == supported.end()) {
      unknown.push_back(key);
    }
  }
  if (unknown.empty()) return Status::OK();
  std::vector<std::string> keys;  // prefixes such as 'properties.' are no suggestion
  for (const std::string& s : supported) {
    if (!s.ends_with('.')) keys.push_back(s);
  }
  std::string msg = "table '" + table.name + "': unsupported option";
  msg += unknown.size() > 1 ? "s" : "";
  for (size_t i = 0; i < unknown.size(); ++i) {
    msg += (i ? ", '" : " '") + unknown[i] + "'" + DidYouMean(unknown[i], keys);
  }
  msg += " for connector '" + std::string(connector) + "'; supported: ";
  std::vector<std::string> sorted(supported);
  std::sort(sorted.begin(), sorted.end());
  msg += "'connector'";
  for (const std::string& s : sorted) msg += ", '" + s + "'";
  return Status::InvalidArgument(std::move(msg));
}

std::string StringOption(const TableDescriptor& table, const std::string& key,
                         std::string fallback) {
  auto it = table.options.find(key);
  return it == table.options.end() ? std::move(fallback) : it->second;
}

Result<int64_t> IntOption(const TableDescriptor& table, const std::string& key, int64_t fallback,
                          int64_t min, int64_t max) {
  auto it = table.options.find(key);
  if (it == table.options.end()) return fallback;
  const std::string& text = it->second;
  int64_t v = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (text.empty() || ec != std::errc() || end != text.data() + text.size()) {
    return Status::InvalidArgument(OptionError(table, key, "must be an integer", text));
  }
  if (v < min || v > max) {
    return Status::InvalidArgument(OptionError(
        table, key, "must be in [" + std::to_string(min) + ", " + std::to_string(max) + "]", text));
  }
  return v;
}

Result<bool> BoolOption(const TableDescriptor& table, const std::string& key, bool fallback) {
  auto it = table.options.find(key);
  if (it == table.options.end()) return fallback;
  std::string lower = it->second;
  for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (lower == "true") return true;
  if (lower == "false") return false;
  return Status::InvalidArgument(OptionError(table, key, "must be 'true' or 'false'", it->second));
}

Result<size_t> ChoiceOption(const TableDescriptor& table, const std::string& key,
                            std::string_view fallback,
                            std::initializer_list<std::string_view> allowed,
                            std::string_view note) {
  auto it = table.options.find(key);
  std::string_view value = it == table.options.end() ? fallback : std::string_view(it->second);
  size_t i = 0;
  for (std::string_view a : allowed) {
    if (a == value) return i;
    ++i;
  }
  std::string rule = "must be ";
  size_t n = 0;
  for (std::string_view a : allowed) {
    if (n > 0) rule += n + 1 == allowed.size() ? " or " : ", ";
    rule += a;
    ++n;
  }
  rule += note;
  return Status::InvalidArgument(OptionError(table, key, rule, value));
}

Result<json::TimestampStandard> TimestampStandardOption(const TableDescriptor& table,
                                                        const std::string& key) {
  std::string value = StringOption(table, key, "SQL");
  if (value == "SQL") return json::TimestampStandard::kSql;
  if (value == "ISO-8601") return json::TimestampStandard::kIso8601;
  return Status::InvalidArgument(
      OptionError(table, key,
                  "must be 'SQL' (\"2020-12-30 12:13:14.123\", the default) or 'ISO-8601' "
                  "(\"2020-12-30T12:13:14.123\")",
                  value));
}

}  // namespace floe::connectors
