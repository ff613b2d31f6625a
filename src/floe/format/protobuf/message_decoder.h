#pragma once
// Protocol Buffers messages (binary wire format) decoded straight into a batch's columns.
#include <memory>
#include <string_view>

#include "floe/common/record_batch.h"
#include "floe/common/status.h"
#include "floe/common/undeclared_fields.h"
#include "floe/format/protobuf/proto_schema.h"

namespace floe::protobuf {

// MessageDecoder maps a message's fields to the table's columns by name. Per column:
//   int32, sint32, sfixed32                   -> INT or BIGINT
//   uint32, fixed32, int64, sint64, sfixed64  -> BIGINT
//   uint64, fixed64                           -> BIGINT (a value above 2^63 - 1 is refused)
//   float -> FLOAT or DOUBLE; double -> DOUBLE; bool -> BOOLEAN; string -> STRING or BYTES;
//   bytes -> BYTES; an enum -> STRING (its value's name; a number it does not name as the
//   number) or INT / BIGINT; google.protobuf.Timestamp -> TIMESTAMP or TIMESTAMP_LTZ.
// A field the table lacks is skipped; a column the message lacks reads null. An absent field is
// null when it has presence (proto2, proto3 `optional`, oneof members, messages) and its
// type's default otherwise (proto3 scalars and enums), as protobuf-java reads it. The last
// occurrence of a field wins. Repeated fields, maps and other messages cannot be columns.
class MessageDecoder {
 public:
  // InvalidArgument naming the field when a column cannot be fed: a NOT NULL column with no
  // field, a repeated or message field, a type that does not fit.
  static Result<std::unique_ptr<MessageDecoder>> Make(std::shared_ptr<const ProtoSchema> schema,
                                                      const ProtoMessage& message,
                                                      std::shared_ptr<const BatchSchema> columns);
  // As Make, with `columns`' last field (a nullable STRING: runtime::kUndeclaredFieldsColumn)
  // receiving, per row, the message's fields no other column names, packed
  // (floe/common/undeclared_fields.h) with the type each becomes: int32, sint32, sfixed32 INT;
  // the other integers BIGINT; float FLOAT; double DOUBLE; bool BOOLEAN; string and enums STRING;
  // bytes BYTES; google.protobuf.Timestamp TIMESTAMP_LTZ; absent as for a column (null with
  // presence, else the default). Repeated fields, maps and other messages stay out.
  static Result<std::unique_ptr<MessageDecoder>> MakeCapturing(
      std::shared_ptr<const ProtoSchema> schema, const ProtoMessage& message,
      std::shared_ptr<const BatchSchema> columns);
  ~MessageDecoder();
  // Appends the row `bytes` holds to `out` (schema: `columns`). On error `out` is as before and
  // the Status names the field: Corruption for malformed bytes, InvalidArgument for a value its
  // column cannot hold (a missing NOT NULL field, bad UTF-8). Not thread-safe: it reuses its
  // per-field scratch from message to message (one decoder per subtask).
  Status Decode(std::string_view bytes, RecordBatch* out) const;
  // MakeCapturing: the fields captured and their types (null otherwise).
  const BatchSchema* captured() const;

  struct Plan;

 private:
  MessageDecoder(std::shared_ptr<const ProtoSchema> schema, std::unique_ptr<Plan> plan);
  static Result<std::unique_ptr<MessageDecoder>> MakePlan(
      std::shared_ptr<const ProtoSchema> schema, const ProtoMessage& message,
      std::shared_ptr<const BatchSchema> columns, bool capture);
  std::shared_ptr<const ProtoSchema> schema_;  // owns the fields the plan points at
  std::unique_ptr<Plan> plan_;
  mutable RecordBatch scratch_;  // MakeCapturing: one row of the captured fields' values
  mutable UndeclaredFieldsWriter packed_;
};

// Confluent's message indexes after the schema id: a zigzag varint count, then that many zigzag
// varint indexes; a count of 0 means [0] (the first message). Advances *data past them and
// replaces *indexes (reused per record: no allocation once it has grown).
Status ReadMessageIndexes(std::string_view* data, std::vector<int64_t>* indexes);

}  // namespace floe::protobuf
