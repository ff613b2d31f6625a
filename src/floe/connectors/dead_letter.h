#pragma once
// What a source does with a record it cannot read ('scan.bad-records'), and the rows it writes
// for the dead-letter table ('scan.bad-records.table'; docs/kafka.md, "Bad records").
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "floe/common/record_batch.h"
#include "floe/common/status.h"
#include "floe/connectors/connector.h"
#include "floe/runtime/operator.h"

namespace floe::connectors {

enum class BadRecordPolicy {
  kFail,        // the job fails naming the record (the default, as Flink's formats do)
  kSkip,        // counted in numRecordsInErrors, logged, not read
  kDeadLetter,  // also written to the dead-letter table, in the same checkpoint as the good rows
};

inline constexpr std::string_view kBadRecordsOption = "scan.bad-records";
inline constexpr std::string_view kBadRecordsTableOption = "scan.bad-records.table";

// The table's policy; InvalidArgument naming the table, the value and the allowed ones, or a
// dead-letter policy without its table (and a table without that policy).
Result<BadRecordPolicy> ParseBadRecordPolicy(const TableDescriptor& table);

// Every column a dead-letter row has, in order (DDL: kDeadLetterColumnsDdl).
std::shared_ptr<const BatchSchema> DeadLetterSchema();
extern const char* const kDeadLetterColumnsDdl;

// One record that could not be read (or row that could not be computed: no coordinates).
// Views: valid for the Append call only.
struct DeadLetter {
  std::string_view source_table;
  std::optional<std::string_view> topic;
  std::optional<int32_t> partition;
  std::optional<int64_t> offset;
  std::optional<int64_t> timestamp_ms;  // the record's Kafka timestamp, if it has one
  std::optional<std::string_view> key;  // nullopt: a null key
  std::optional<std::string_view> value;
  const std::vector<std::pair<std::string, std::string>>* headers = nullptr;
  std::string_view error;
};

// DeadLetterSchema rows, appended one at a time and taken as a batch.
class DeadLetterRows {
 public:
  DeadLetterRows();
  void Append(const DeadLetter& letter);
  size_t size() const { return rows_.num_rows(); }
  RecordBatch Take();

 private:
  RecordBatch rows_;
};

// OK when every column `declared` has is a dead-letter column of the same type and
// error_message is one of them; InvalidArgument naming the column and giving the DDL otherwise.
// `source_table`: the table whose bad records it takes (for the message).
Status CheckDeadLetterTable(const TableDescriptor& declared, std::string_view source_table);

// The columns of `declared` (checked by CheckDeadLetterTable) taken by name from `full`
// (DeadLetterSchema rows).
RecordBatch ProjectDeadLetters(const RecordBatch& full,
                               const std::shared_ptr<const BatchSchema>& declared);

// Between the side outputs that carry dead letters and the dead-letter table's sink: the rows
// in the declared table's columns. It takes DeadLetterSchema rows (a source's records that did
// not decode) and the rows of `source_table` whose computed columns failed, as the computed
// columns operator sends them: (error_message STRING, row STRING), the row as a JSON object,
// which becomes kafka_value (the record's coordinates are not known past the source).
class DeadLetterProjection final : public runtime::Operator {
 public:
  DeadLetterProjection(std::shared_ptr<const BatchSchema> declared, std::string source_table)
      : declared_(std::move(declared)), source_table_(std::move(source_table)) {}
  Status ProcessBatch(const RecordBatch& batch, int input, runtime::Collector& out) override;

 private:
  std::shared_ptr<const BatchSchema> declared_;
  std::string source_table_;
};

}  // namespace floe::connectors
