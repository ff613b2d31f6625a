#pragma once

// Internal to floe_iceberg: Iceberg's schema and partition spec as JSON values (on the common
// JSON boundary, floe/common/json.h), shared by the schema, partition spec and table metadata
// codecs. Never included from a public header. Errors are Corruption naming the document and
// the field, e.g. "v3.metadata.json: field 'schemas[0].fields[1].id': expected integer, got
// string".

#include "floe/common/json.h"
#include "floe/common/status.h"
#include "floe/iceberg/partition_spec.h"
#include "floe/iceberg/schema.h"

namespace floe::iceberg::internal {

OrderedJson SchemaToJsonValue(const Schema& schema);
Result<Schema> SchemaFromJsonValue(const OrderedJson& j, const JsonPath& at);
OrderedJson PartitionSpecToJsonValue(const PartitionSpec& spec);
Result<PartitionSpec> PartitionSpecFromJsonValue(const OrderedJson& j, const JsonPath& at);

}  // namespace floe::iceberg::internal
