#pragma once

// A table's rows as Avro binary datums of the schema Flink derives from the table's columns.

#include <string>

#include "floe/common/record_batch.h"
#include "floe/common/status.h"

namespace floe::avro {

// The Avro schema (JSON text) Flink's avro-confluent format derives from a table's columns
// (AvroSchemaConverter, its legacy timestamp mapping): record `record` in namespace
// `org.apache.flink.avro.generated`, one field per column in order; a nullable column is the
// union ["null", T] with default null. BOOLEAN boolean, INT int, BIGINT long, FLOAT float, DOUBLE
// double, STRING string, BYTES bytes, DECIMAL(p, s) bytes (decimal p, s), DATE int (date),
// TIME int (time-millis), TIMESTAMP(0..3) long (timestamp-millis). Where Flink refuses, floe
// differs on purpose: TIMESTAMP(4..6) (and TIMESTAMP of no known precision) is long
// (timestamp-micros). TIMESTAMP_LTZ is refused, as Flink's legacy mapping refuses it:
// InvalidArgument naming the column.
Result<std::string> AvroSchemaForColumns(const BatchSchema& columns);

// Appends row `row` of `batch` as one datum of AvroSchemaForColumns(*batch.schema()).
// REQUIRES: that schema was accepted.
void AppendRowAsAvro(const RecordBatch& batch, size_t row, std::string* out);

}  // namespace floe::avro
