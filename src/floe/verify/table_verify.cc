#include "floe/verify/table_verify.h"

#include <algorithm>
#include <charconv>
#include <map>
#include <unordered_map>

#include <nlohmann/json.hpp>

#include "floe/common/json.h"
#include "floe/format/json/json_lines.h"
#include "floe/iceberg/manifest_io.h"
#include "floe/iceberg/scan.h"
#include "floe/iceberg/schema.h"
#include "floe/io/file.h"

namespace floe::verify {

namespace {

bool ParseI64(std::string_view s, int64_t* out) {
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), *out);
  return !s.empty() && ec == std::errc() && p == s.data() + s.size();
}

std::string ValueText(const Column& column, size_t row) {
  if (column.IsNull(row)) return "null";
  return iceberg::ValueToString(column.type(), iceberg::ValueAt(column, row));
}

bool IsInteger(const DataType& t) { return t.id == TypeId::kInt32 || t.id == TypeId::kInt64; }

int64_t IntegerAt(const Column& column, size_t row) {
  return column.type().id == TypeId::kInt32 ? column.Get<int32_t>(row) : column.Get<int64_t>(row);
}

Result<int> ColumnIndex(const BatchSchema& schema, const std::string& name, const char* flag) {
  int index = schema.FieldIndex(name);
  if (index < 0) {
    std::string names;
    for (const Field& f : schema.fields) names += (names.empty() ? "" : ", ") + f.name;
    return Status::InvalidArgument(std::string(flag) + " " + name +
                                   ": the table has no such column (columns: " + names + ")");
  }
  return index;
}

void AddExample(std::vector<std::string>* examples, size_t max, std::string text) {
  if (examples->size() < max) examples->push_back(std::move(text));
}

std::string Examples(const std::vector<std::string>& examples) {
  std::string out;
  for (const auto& e : examples) out += (out.empty() ? "" : ", ") + e;
  return out;
}

struct ExpectedRow {
  std::vector<std::string> columns;  // columns the line held
  Json values;                       // normalized row (every table column)
};

// Loads the expected JSON-lines file: each line decoded with the table's types (every column
// nullable) and re-encoded, so both sides compare in floe's JSON encoding.
Result<std::map<std::string, ExpectedRow>> LoadExpected(const std::string& path,
                                                        const BatchSchema& table_schema,
                                                        const std::string& key_column) {
  FLOE_ASSIGN_OR_RAISE(std::string text, io::ReadFile(path));
  auto schema = std::make_shared<BatchSchema>(table_schema);
  for (Field& f : schema->fields) f.nullable = true;
  FLOE_ASSIGN_OR_RAISE(auto decoder, json::JsonLinesDecoder::Make(schema));
  std::map<std::string, ExpectedRow> rows;
  size_t start = 0;
  int64_t line_no = 0;
  while (start < text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    std::string_view line(text.data() + start, end - start);
    start = end + 1;
    ++line_no;
    if (line.find_first_not_of(" \t\r") == std::string_view::npos) continue;
    std::string where = path + ":" + std::to_string(line_no) + ": ";
    Result<Json> parsed = ParseJson(line, JsonPath(path));
    if (!parsed.ok() || !parsed->is_object()) {
      return Status::InvalidArgument(where + "not a JSON object");
    }
    ExpectedRow row;
    for (auto it = parsed->begin(); it != parsed->end(); ++it) {
      if (schema->FieldIndex(it.key()) < 0) {
        return Status::InvalidArgument(where + "column '" + it.key() +
                                       "' is not a column of the table");
      }
      row.columns.push_back(it.key());
    }
    if (!parsed->contains(key_column)) {
      return Status::InvalidArgument(where + "the key column '" + key_column + "' is missing");
    }
    RecordBatch one(schema);
    FLOE_RETURN_NOT_OK(decoder->Decode(line, path, line_no, &one));
    std::string encoded;
    json::AppendRowAsJson(one, 0, &encoded);
    Result<Json> values = ParseJson(encoded, JsonPath(where + "re-encoded row"));
    if (!values.ok()) return Status::Internal(values.status().message());
    row.values = std::move(values).value();
    std::string key = DumpJson(row.values[key_column]);
    rows[key] = std::move(row);  // a later line for the same key wins
  }
  return rows;
}

Status CountLiveFiles(const io::FileIO& file_io, const iceberg::TableMetadata& metadata,
                      VerifyReport* report) {
  const iceberg::Snapshot* current = metadata.current_snapshot();
  if (current == nullptr) return Status::OK();
  FLOE_ASSIGN_OR_RAISE(std::vector<iceberg::ManifestFile> manifests,
                       iceberg::ReadManifestList(file_io, current->manifest_list));
  for (const iceberg::ManifestFile& manifest : manifests) {
    FLOE_ASSIGN_OR_RAISE(std::vector<iceberg::ManifestEntry> entries,
                         iceberg::ReadManifest(file_io, manifest, metadata));
    for (const iceberg::ManifestEntry& e : entries) {
      if (e.status == iceberg::EntryStatus::kDeleted) continue;
      if (e.data_file.content == iceberg::FileContent::kData) {
        ++report->data_files;
      } else {
        ++report->delete_files;
        report->delete_records += e.data_file.record_count;
      }
    }
  }
  return Status::OK();
}

}  // namespace

Result<VerifyOptions::Range> ParseExpectRange(std::string_view text) {
  auto bad = [&] {
    return Status::InvalidArgument("--expect-range '" + std::string(text) +
                                   "': expected COLUMN:FIRST..LAST, e.g. seq:1..12000");
  };
  size_t colon = text.rfind(':');
  if (colon == std::string_view::npos || colon == 0) return bad();
  std::string_view bounds = text.substr(colon + 1);
  size_t dots = bounds.find("..");
  if (dots == std::string_view::npos) return bad();
  VerifyOptions::Range range;
  range.column = std::string(text.substr(0, colon));
  if (!ParseI64(bounds.substr(0, dots), &range.first) ||
      !ParseI64(bounds.substr(dots + 2), &range.last)) {
    return bad();
  }
  if (range.first > range.last) {
    return Status::InvalidArgument("--expect-range '" + std::string(text) +
                                   "': FIRST must not exceed LAST");
  }
  return range;
}

std::vector<ValueRun> MissingRuns(const std::vector<int64_t>& present, int64_t first,
                                  int64_t last) {
  std::vector<ValueRun> runs;
  int64_t next = first;  // smallest value not yet accounted for
  auto it = std::lower_bound(present.begin(), present.end(), first);
  for (; it != present.end() && *it <= last; ++it) {
    if (*it < next) continue;  // duplicate
    if (*it > next) runs.push_back({next, *it - 1});
    if (*it == last) return runs;
    next = *it + 1;
  }
  if (next <= last) runs.push_back({next, last});
  return runs;
}

std::string FormatRuns(const std::vector<ValueRun>& runs, size_t max_runs) {
  std::string out;
  for (size_t i = 0; i < runs.size() && i < max_runs; ++i) {
    if (!out.empty()) out += ", ";
    out += std::to_string(runs[i].first);
    if (runs[i].last != runs[i].first) out += ".." + std::to_string(runs[i].last);
  }
  if (runs.size() > max_runs) {
    out += ", ... (" + std::to_string(runs.size() - max_runs) + " more runs)";
  }
  return out;
}

std::string VerifyReport::ToText() const {
  std::string out = "table " + table + ": " + std::to_string(rows) + " rows; " +
                    std::to_string(snapshots) + " snapshots; " + std::to_string(data_files) +
                    " data files, " + std::to_string(delete_files) + " delete files (" +
                    std::to_string(delete_records) + " delete rows)\n";
  if (!unique_column.empty()) {
    out += "unique " + unique_column + ": ";
    if (duplicate_values == 0) {
      out += "no duplicates\n";
    } else {
      out += std::to_string(duplicate_values) + " values occur more than once (" +
             std::to_string(duplicate_rows) + " extra rows), e.g. " + Examples(duplicate_examples) +
             "\n";
    }
  }
  if (range) {
    out += "range " + range->column + " " + std::to_string(range->first) + ".." +
           std::to_string(range->last) + ": ";
    if (missing_count == 0 && outside_range == 0) {
      out += "complete\n";
    } else {
      std::string parts;
      if (missing_count > 0) {
        parts += "missing " + std::to_string(missing_count) + " in " +
                 std::to_string(missing_runs.size()) + " run" +
                 (missing_runs.size() == 1 ? "" : "s") + ": " + FormatRuns(missing_runs);
      }
      if (outside_range > 0) {
        parts += std::string(parts.empty() ? "" : "; ") + std::to_string(outside_range) +
                 " rows outside the range, e.g. " + Examples(outside_examples);
      }
      out += parts + "\n";
    }
  }
  if (!expected_file.empty()) {
    out += "expected " + expected_file + " (key " + key_column + ", " +
           std::to_string(expected_rows) + " rows): ";
    std::vector<std::string> parts;
    if (missing_keys > 0) {
      parts.push_back(std::to_string(missing_keys) + " keys missing from the table, e.g. " +
                      Examples(missing_key_examples));
    }
    if (extra_keys > 0) {
      parts.push_back(std::to_string(extra_keys) + " keys not expected, e.g. " +
                      Examples(extra_key_examples));
    }
    if (duplicate_keys > 0) {
      parts.push_back(std::to_string(duplicate_keys) + " extra rows for a key, e.g. " +
                      Examples(duplicate_key_examples));
    }
    if (differing_rows > 0) {
      parts.push_back(std::to_string(differing_rows) + " rows differ, e.g. " +
                      Examples(difference_examples));
    }
    if (parts.empty()) {
      out += "matches\n";
    } else {
      std::string joined;
      for (const auto& p : parts) joined += (joined.empty() ? "" : "; ") + p;
      out += joined + "\n";
    }
  }
  int64_t n = findings();
  out += n == 0 ? "result: OK\n"
                : "result: " + std::to_string(n) + " finding" + (n == 1 ? "" : "s") + "\n";
  return out;
}

// Stays long: one table scan feeds the optional checks, which share its loop and its tallies.
Result<VerifyReport> VerifyTableMetadata(const io::FileIO& file_io,
                                         const iceberg::TableMetadata& metadata,
                                         const std::string& table_name,
                                         const VerifyOptions& options) {
  VerifyReport report;
  report.table = table_name;
  report.snapshots = static_cast<int64_t>(metadata.snapshots.size());
  std::shared_ptr<const BatchSchema> schema = metadata.current_schema().ToBatchSchema();
  const size_t max = options.max_examples;

  int unique_index = -1;
  if (!options.unique_column.empty()) {
    FLOE_ASSIGN_OR_RAISE(unique_index, ColumnIndex(*schema, options.unique_column, "--unique"));
    report.unique_column = options.unique_column;
  }
  int range_index = -1;
  if (options.expect_range) {
    FLOE_ASSIGN_OR_RAISE(range_index,
                         ColumnIndex(*schema, options.expect_range->column, "--expect-range"));
    if (!IsInteger(schema->fields[range_index].type)) {
      return Status::InvalidArgument(
          "--expect-range " + options.expect_range->column + ": the column is " +
          iceberg::FlinkTypeName(schema->fields[range_index].type) + ", not INT or BIGINT");
    }
    report.range = options.expect_range;
  }
  std::map<std::string, ExpectedRow> expected;
  if (!options.expected_file.empty()) {
    if (options.key_column.empty()) {
      return Status::InvalidArgument("--expected needs --key COLUMN");
    }
    FLOE_RETURN_NOT_OK(ColumnIndex(*schema, options.key_column, "--key").status());
    FLOE_ASSIGN_OR_RAISE(expected,
                         LoadExpected(options.expected_file, *schema, options.key_column));
    report.expected_file = options.expected_file;
    report.key_column = options.key_column;
    report.expected_rows = static_cast<int64_t>(expected.size());
  }
  FLOE_RETURN_NOT_OK(CountLiveFiles(file_io, metadata, &report));

  std::unordered_map<std::string, int64_t> unique_counts;
  std::vector<std::string> unique_order;  // first-seen order, for stable examples
  std::vector<int64_t> range_values;
  std::unordered_map<std::string, int64_t> key_counts;
  FLOE_RETURN_NOT_OK(
      iceberg::ScanTable(file_io, metadata, std::nullopt, [&](const RecordBatch& batch) -> Status {
        report.rows += static_cast<int64_t>(batch.num_rows());
        for (size_t row = 0; row < batch.num_rows(); ++row) {
          if (unique_index >= 0) {
            std::string v = ValueText(batch.column(unique_index), row);
            int64_t& count = unique_counts[v];
            if (count++ == 0) unique_order.push_back(std::move(v));
          }
          if (range_index >= 0) {
            const Column& c = batch.column(range_index);
            const auto& r = *options.expect_range;
            if (c.IsNull(row)) {
              ++report.outside_range;
              AddExample(&report.outside_examples, max, "null");
            } else {
              int64_t v = IntegerAt(c, row);
              if (v < r.first || v > r.last) {
                ++report.outside_range;
                AddExample(&report.outside_examples, max, std::to_string(v));
              } else {
                range_values.push_back(v);
              }
            }
          }
          if (!options.expected_file.empty()) {
            std::string encoded;
            json::AppendRowAsJson(batch, row, &encoded);
            Result<Json> parsed = ParseJson(encoded, JsonPath("re-encoded row"));
            if (!parsed.ok()) return Status::Internal(parsed.status().message());
            Json& actual = *parsed;
            std::string key = DumpJson(actual[options.key_column]);
            if (key_counts[key]++ > 0) {
              ++report.duplicate_keys;
              AddExample(&report.duplicate_key_examples, max, options.key_column + "=" + key);
              continue;
            }
            auto it = expected.find(key);
            if (it == expected.end()) {
              ++report.extra_keys;
              AddExample(&report.extra_key_examples, max, options.key_column + "=" + key);
              continue;
            }
            for (const std::string& column : it->second.columns) {
              const Json& want = it->second.values[column];
              const Json& have = actual[column];
              if (want != have) {
                ++report.differing_rows;
                AddExample(&report.difference_examples, max,
                           options.key_column + "=" + key + ": " + column + ": table " +
                               DumpJson(have) + ", expected " + DumpJson(want));
                break;
              }
            }
          }
        }
        return Status::OK();
      }));

  for (const std::string& v : unique_order) {
    int64_t count = unique_counts[v];
    if (count > 1) {
      ++report.duplicate_values;
      report.duplicate_rows += count - 1;
      AddExample(&report.duplicate_examples, max, v + " (x" + std::to_string(count) + ")");
    }
  }
  if (options.expect_range) {
    std::sort(range_values.begin(), range_values.end());
    report.missing_runs =
        MissingRuns(range_values, options.expect_range->first, options.expect_range->last);
    for (const ValueRun& r : report.missing_runs) report.missing_count += r.last - r.first + 1;
  }
  for (const auto& [key, row] : expected) {
    if (key_counts.count(key) == 0) {
      ++report.missing_keys;
      AddExample(&report.missing_key_examples, max, options.key_column + "=" + key);
    }
  }
  return report;
}

Result<VerifyReport> VerifyTable(iceberg::Catalog& catalog, const iceberg::TableIdentifier& id,
                                 const VerifyOptions& options) {
  FLOE_ASSIGN_OR_RAISE(iceberg::LoadedTable table, catalog.LoadTable(id));
  return VerifyTableMetadata(catalog.file_io(), table.metadata, id.ToString(), options);
}

std::string RosterExpectedJsonLines(const connectors::RosterOptions& options) {
  connectors::RosterGenerator generator(options);
  std::vector<RecordBatch> batches;
  std::map<std::string, std::pair<size_t, size_t>> latest;  // npi -> (batch, row), sorted
  const int npi = connectors::RosterGenerator::Schema()->FieldIndex("npi");
  while (true) {
    RecordBatch batch = generator.Next(4096);
    if (batch.num_rows() == 0) break;
    for (size_t row = 0; row < batch.num_rows(); ++row) {
      // Feed order: a later event about an npi carries a higher revision and replaces it.
      latest[std::string(batch.column(npi).GetBytes(row))] = {batches.size(), row};
    }
    batches.push_back(std::move(batch));
  }
  std::string out;
  for (const auto& [key, at] : latest) json::AppendRowAsJson(batches[at.first], at.second, &out);
  return out;
}

}  // namespace floe::verify
