#pragma once

#include <memory>
#include <string_view>

#include "floe/common/record_batch.h"

namespace floe::runtime {

// The reserved column a changelog source ('format' = 'debezium-json') appends to its batches:
// each row's kind as Flink's RowKind short string, "+I" insert, "-U" update-before, "+U"
// update-after, "-D" delete. A STRING NOT NULL column after the declared ones. SQL cannot name
// it: the planner refuses a table that declares a column of this name, the Calc passes it
// through untouched (WHERE filters rows of any kind, SELECT projects the declared columns), and
// sinks read it (the upsert Iceberg writer applies the kinds, print shows them).
inline constexpr const char* kRowKindColumn = "$row_kind";

// `columns` with kRowKindColumn appended (field id 0: not a table column).
std::shared_ptr<const BatchSchema> WithRowKindColumn(const BatchSchema& columns);
// The index of kRowKindColumn in `schema`, -1 when absent.
int RowKindIndex(const BatchSchema& schema);
// Whether a row kind takes a row back ("-U", "-D") rather than adds one ("+I", "+U").
inline bool IsRetraction(std::string_view kind) { return !kind.empty() && kind[0] == '-'; }

// The reserved column a scaled-out job's Kafka source appends: the split name of the partition
// claim each row was read under (connectors/partition_claims.h), which the Iceberg writers keep
// files apart by. A STRING NOT NULL column after the declared ones (after kRowKindColumn, if
// any); SQL cannot name it.
inline constexpr const char* kSourceSplitColumn = "$source_split";
// `columns` with kSourceSplitColumn appended.
std::shared_ptr<const BatchSchema> WithSourceSplitColumn(const BatchSchema& columns);

// The reserved column a source appends when its records' fields beyond the declared columns
// should reach a sink that grows its table by them (docs/connectors.md, "Schema evolution"): per
// row the packed undeclared fields (floe/common/undeclared_fields.h), null when there are none.
// A nullable STRING column after the declared ones (and after the two above); SQL cannot name it.
inline constexpr const char* kUndeclaredFieldsColumn = "$undeclared";
// `columns` with kUndeclaredFieldsColumn appended.
std::shared_ptr<const BatchSchema> WithUndeclaredFieldsColumn(const BatchSchema& columns);

// How many reserved columns (the three above) end `schema`: what a projection passes through
// untouched after the declared columns. Other '$' columns (the planner's hidden ones) are not.
size_t TrailingReservedColumns(const BatchSchema& schema);

}  // namespace floe::runtime
