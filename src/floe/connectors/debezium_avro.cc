#include "floe/connectors/debezium_avro.h"

#include <string>
#include <vector>

#include "floe/format/avro/encoding.h"
#include "floe/format/avro/record_decoder.h"

namespace floe::connectors {

namespace {

Status Invalid(const std::string& what) {
  return Status::InvalidArgument("debezium-avro-confluent: " + what);
}

// The record branch of a "before" / "after" field: a union of null and one record.
Result<const avro::Node*> RowRecord(const avro::FieldNode& f) {
  const avro::Node* record = nullptr;
  bool has_null = false;
  if (f.type->type == avro::Type::kUnion) {
    for (const avro::Node* b : f.type->branches) {
      if (b->type == avro::Type::kNull) {
        has_null = true;
      } else if (b->type == avro::Type::kRecord && record == nullptr) {
        record = b;
      } else {
        record = nullptr;
        break;
      }
    }
  }
  if (record == nullptr || !has_null) {
    return Invalid("envelope field '" + f.name + "' must be a union of null and a record");
  }
  return record;
}

}  // namespace

struct DebeziumAvroDecoder::Impl {
  std::shared_ptr<const avro::Schema> envelope;
  std::shared_ptr<const BatchSchema> columns;
  enum class Role { kSkip, kBefore, kAfter, kOp };
  std::vector<Role> roles;  // per envelope field, in the writer's order
  std::unique_ptr<avro::RecordDecoder> before, after;
  RecordBatch before_row, after_row;  // this event's, 0 or 1 row each

  // Reads a before/after union into *row.
  Status ReadRow(const avro::FieldNode& f, const avro::RecordDecoder& decoder,
                 std::string_view* data, RecordBatch* row) {
    int64_t branch = 0;
    FLOE_RETURN_NOT_OK(avro::ReadVarint(data, &branch));
    if (branch < 0 || static_cast<size_t>(branch) >= f.type->branches.size()) {
      return Status::Corruption("field '" + f.name + "': union branch " + std::to_string(branch));
    }
    if (f.type->branches[static_cast<size_t>(branch)]->type == avro::Type::kNull) {
      return Status::OK();
    }
    Status st = decoder.DecodeFrom(data, row);
    return st.ok() ? st : Status(st.code(), "field '" + f.name + "': " + st.message());
  }

  void Append(const RecordBatch& row, const char* kind, RecordBatch* rows, Column* kinds) {
    for (size_t i = 0; i < rows->num_columns(); ++i) {
      rows->mutable_column(i).AppendRange(row.column(i), 0, 1);
    }
    kinds->AppendBytes(kind);
  }
};

DebeziumAvroDecoder::DebeziumAvroDecoder(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
DebeziumAvroDecoder::~DebeziumAvroDecoder() = default;

Result<std::unique_ptr<DebeziumAvroDecoder>> DebeziumAvroDecoder::Make(
    std::shared_ptr<const avro::Schema> envelope, std::shared_ptr<const BatchSchema> columns) {
  const avro::Node& root = envelope->root();
  if (root.type != avro::Type::kRecord) return Invalid("the writer's schema is not a record");
  auto impl = std::make_unique<Impl>();
  impl->columns = columns;
  for (const avro::FieldNode& f : root.fields) {
    using Role = Impl::Role;
    Role role = f.name == "before"  ? Role::kBefore
                : f.name == "after" ? Role::kAfter
                : f.name == "op"    ? Role::kOp
                                    : Role::kSkip;
    if (role == Role::kBefore || role == Role::kAfter) {
      FLOE_ASSIGN_OR_RAISE(const avro::Node* record, RowRecord(f));
      Result<std::unique_ptr<avro::RecordDecoder>> decoder =
          avro::RecordDecoder::Make(envelope, *record, columns);
      if (!decoder.ok()) {
        return Invalid("envelope field '" + f.name + "': " + decoder.status().message());
      }
      (role == Role::kBefore ? impl->before : impl->after) = std::move(decoder).value();
    } else if (role == Role::kOp && f.type->type != avro::Type::kString) {
      return Invalid("envelope field 'op' must be a string");
    }
    impl->roles.push_back(role);
  }
  for (const char* needed : {"before", "after", "op"}) {
    bool found = false;
    for (const avro::FieldNode& f : root.fields) found = found || f.name == needed;
    if (!found) {
      return Invalid("the writer's schema " + root.name + " has no field '" + needed +
                     "' (is it a Debezium envelope?)");
    }
  }
  impl->envelope = std::move(envelope);
  return std::make_unique<DebeziumAvroDecoder>(std::move(impl));
}

Status DebeziumAvroDecoder::Decode(std::string_view datum, RecordBatch* rows, Column* kinds) {
  Impl& m = *impl_;
  m.before_row = RecordBatch(m.columns);
  m.after_row = RecordBatch(m.columns);
  std::string op;
  const avro::Node& root = m.envelope->root();
  for (size_t i = 0; i < root.fields.size(); ++i) {
    const avro::FieldNode& f = root.fields[i];
    switch (m.roles[i]) {
      case Impl::Role::kBefore:
        FLOE_RETURN_NOT_OK(m.ReadRow(f, *m.before, &datum, &m.before_row));
        break;
      case Impl::Role::kAfter:
        FLOE_RETURN_NOT_OK(m.ReadRow(f, *m.after, &datum, &m.after_row));
        break;
      case Impl::Role::kOp: {
        int64_t size = 0;
        FLOE_RETURN_NOT_OK(avro::ReadVarint(&datum, &size));
        if (size < 0 || static_cast<uint64_t>(size) > datum.size()) {
          return Status::Corruption("field 'op': a string of " + std::to_string(size) +
                                    " bytes where " + std::to_string(datum.size()) + " are left");
        }
        op.assign(datum.substr(0, static_cast<size_t>(size)));
        datum.remove_prefix(static_cast<size_t>(size));
        break;
      }
      case Impl::Role::kSkip:
        FLOE_RETURN_NOT_OK(avro::SkipDatum(*f.type, f.name, &datum));
        break;
    }
  }
  if (!datum.empty()) {
    return Status::Corruption(std::to_string(datum.size()) +
                              " bytes follow the envelope the writer's schema describes");
  }
  const bool before = m.before_row.num_rows() == 1;
  const bool after = m.after_row.num_rows() == 1;
  if (op == "c" || op == "r") {
    if (!after) return Invalid("op '" + op + "' with a null 'after'");
    m.Append(m.after_row, "+I", rows, kinds);
  } else if (op == "u") {
    if (!after) return Invalid("op 'u' with a null 'after'");
    if (!before) {
      return Invalid(
          "op 'u' with a null 'before' (Debezium writes it only when the source table's replica "
          "identity is FULL; Flink refuses these events too)");
    }
    m.Append(m.before_row, "-U", rows, kinds);
    m.Append(m.after_row, "+U", rows, kinds);
  } else if (op == "d") {
    if (!before) return Invalid("op 'd' with a null 'before'");
    m.Append(m.before_row, "-D", rows, kinds);
  } else {
    return Invalid("unknown op '" + op + "' (c, r, u or d)");
  }
  return Status::OK();
}

}  // namespace floe::connectors
