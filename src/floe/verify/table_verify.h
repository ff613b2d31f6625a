#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "floe/common/status.h"
#include "floe/connectors/roster/roster_generator.h"
#include "floe/iceberg/catalog.h"
#include "floe/iceberg/table_metadata.h"

namespace floe::verify {

// `floe table verify NS.TABLE [--unique COL] [--expect-range COL:A..B] [--expected FILE --key COL]`
struct VerifyOptions {
  // Column whose values must be unique (--unique).
  std::string unique_column;
  // Every integer of [first, last] must appear in `column` (--expect-range COL:first..last).
  struct Range {
    std::string column;
    int64_t first = 0;
    int64_t last = 0;
  };
  std::optional<Range> expect_range;
  // JSON-lines file of the expected table (--expected), rows keyed by `key_column` (--key).
  // Rows are compared on the columns each expected line holds, after both sides went through
  // floe's JSON encoding of the table's types (so "2024-01-02 03:04:05" and
  // "2024-01-02T03:04:05.000000" are the same timestamp).
  std::string expected_file;
  std::string key_column;
  // How many examples each finding lists.
  size_t max_examples = 5;
};

// "seq:1..12000" -> {seq, 1, 12000}. InvalidArgument explaining the form.
Result<VerifyOptions::Range> ParseExpectRange(std::string_view text);

// A run of consecutive integers [first, last].
struct ValueRun {
  int64_t first = 0;
  int64_t last = 0;
  bool operator==(const ValueRun&) const = default;
};
// The integers of [first, last] missing from `present` (sorted ascending, duplicates allowed),
// as runs.
std::vector<ValueRun> MissingRuns(const std::vector<int64_t>& present, int64_t first, int64_t last);
// "1001..1200, 5003" -- at most `max_runs` runs, then ", ... (N more runs)".
std::string FormatRuns(const std::vector<ValueRun>& runs, size_t max_runs = 20);

// What `floe table verify` found. findings() > 0 means the CLI exits non-zero.
struct VerifyReport {
  std::string table;
  int64_t rows = 0;  // live rows (deletes applied) of the current snapshot
  int64_t snapshots = 0;
  int64_t data_files = 0;    // live data files of the current snapshot
  int64_t delete_files = 0;  // live delete files of the current snapshot
  int64_t delete_records = 0;

  // --unique
  std::string unique_column;
  int64_t duplicate_values = 0;                 // distinct values occurring more than once
  int64_t duplicate_rows = 0;                   // rows beyond the first of each such value
  std::vector<std::string> duplicate_examples;  // "5 (x3)"

  // --expect-range
  std::optional<VerifyOptions::Range> range;
  int64_t missing_count = 0;
  std::vector<ValueRun> missing_runs;
  int64_t outside_range = 0;  // rows whose value is null or outside [first, last]
  std::vector<std::string> outside_examples;

  // --expected
  std::string expected_file;
  std::string key_column;
  int64_t expected_rows = 0;
  int64_t missing_keys = 0;  // expected keys the table lacks
  std::vector<std::string> missing_key_examples;
  int64_t extra_keys = 0;  // table keys the expected file lacks
  std::vector<std::string> extra_key_examples;
  int64_t duplicate_keys = 0;  // table rows beyond the first per key
  std::vector<std::string> duplicate_key_examples;
  int64_t differing_rows = 0;                    // same key, some expected column differs
  std::vector<std::string> difference_examples;  // "key=\"1\": city: table \"A\", expected \"B\""

  int64_t findings() const {
    return duplicate_rows + missing_count + outside_range + missing_keys + extra_keys +
           duplicate_keys + differing_rows;
  }
  // Several lines, ending with "result: OK" or "result: N finding(s)".
  std::string ToText() const;
};

// Scans the current snapshot of `id` (deletes applied) and checks what `options` asks.
// Errors: table not found, unknown or mistyped columns, unreadable expected file (line named).
Result<VerifyReport> VerifyTable(iceberg::Catalog& catalog, const iceberg::TableIdentifier& id,
                                 const VerifyOptions& options);
// The same for a table's metadata, its files read with `file_io`.
Result<VerifyReport> VerifyTableMetadata(const io::FileIO& file_io,
                                         const iceberg::TableMetadata& metadata,
                                         const std::string& table_name,
                                         const VerifyOptions& options);

// `floe roster expected --seed S [--events N --providers P --sources K]`: the upsert table the
// roster feed must produce with PRIMARY KEY (npi): per npi the latest event (highest revision =
// last occurrence in feed order), as JSON lines (json::AppendRowAsJson, roster schema, every
// column), sorted by npi.
std::string RosterExpectedJsonLines(const connectors::RosterOptions& options);

}  // namespace floe::verify
