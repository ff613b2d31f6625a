#pragma once

#include <cstdint>
#include <initializer_list>
#include <string>
#include <string_view>
#include <vector>

#include "floe/common/closest_match.h"  // ClosestMatch, DidYouMean
#include "floe/common/status.h"
#include "floe/connectors/connector.h"
#include "floe/format/json/json_lines.h"

// Reading a table's WITH options. Every error names the table, the option, the rule and the
// value, so a job file can be fixed without reading code.
namespace floe::connectors {

// InvalidArgument listing the options `connector` supports when `table` has any other key
// (Flink refuses unsupported options the same way), each with the closest supported one:
// "unsupported option 'paht' (did you mean 'path'?) for connector ...". 'connector' itself is
// always allowed.
Status CheckSupportedOptions(const TableDescriptor& table, std::string_view connector,
                             const std::vector<std::string>& supported);

// The value of `key`, or `fallback` when absent.
std::string StringOption(const TableDescriptor& table, const std::string& key,
                         std::string fallback);
// A decimal integer in [min, max]; `fallback` when absent.
Result<int64_t> IntOption(const TableDescriptor& table, const std::string& key, int64_t fallback,
                          int64_t min, int64_t max);
// 'true' | 'false' (case-insensitive); `fallback` when absent.
Result<bool> BoolOption(const TableDescriptor& table, const std::string& key, bool fallback);

// Flink's '<format>.timestamp-format.standard' (key e.g. 'json.timestamp-format.standard'):
// 'SQL' (Flink's default, also when absent) or 'ISO-8601', spelled exactly so (Flink compares
// case-sensitively too).
Result<json::TimestampStandard> TimestampStandardOption(const TableDescriptor& table,
                                                        const std::string& key);

// The index in `allowed` of the value of `key` (exact match); `fallback`'s index when absent.
// Otherwise InvalidArgument "must be a, b or c<note>". REQUIRES: `fallback` is in `allowed`.
Result<size_t> ChoiceOption(const TableDescriptor& table, const std::string& key,
                            std::string_view fallback,
                            std::initializer_list<std::string_view> allowed,
                            std::string_view note = "");

// "table 'T': option 'K' <rule>, got 'V'".
std::string OptionError(const TableDescriptor& table, std::string_view key, std::string_view rule,
                        std::string_view value);

}  // namespace floe::connectors
