#include "floe/connectors/debezium_json.h"

#include <simdjson.h>

#include <optional>

#include "floe/format/json/json_lines.h"

namespace floe::connectors {
namespace od = simdjson::ondemand;

namespace {

constexpr std::string_view kReplicaIdentity =
    " (Debezium sends it only when the table's replica identity is FULL; Flink refuses such "
    "events too)";

Status Bad(std::string_view what) {
  return Status::InvalidArgument("debezium-json: " + std::string(what));
}

std::string Token(od::value& v) {
  std::string_view tok = v.raw_json_token();
  while (!tok.empty() && (tok.back() == ' ' || tok.back() == '\n' || tok.back() == ',' ||
                          tok.back() == '}' || tok.back() == ']')) {
    tok.remove_suffix(1);
  }
  if (tok.size() > 40) return std::string(tok.substr(0, 40)) + "...";
  return std::string(tok);
}

struct Envelope {
  std::optional<std::string_view> before, after;
  std::optional<std::string_view> op;
  bool saw_schema = false;
  bool saw_payload = false;
};

}  // namespace

struct DebeziumJsonDecoder::Impl {
  DebeziumJsonOptions options;
  std::unique_ptr<json::JsonLinesDecoder> rows;
  od::parser parser;
  std::string buffer;  // the event plus simdjson's padding; capacity reused across events
  int64_t skipped = 0;

  // Reads "before" / "after" / "op" of `obj` into *e; with `unwrap` a "payload" object is read
  // the same way (schema-include).
  Status ReadObject(od::object obj, bool unwrap, Envelope* e) {
    for (auto field_result : obj) {
      od::field field;
      if (std::move(field_result).get(field) != simdjson::SUCCESS) return Bad("invalid JSON");
      std::string_view key;
      if (field.unescaped_key().get(key) != simdjson::SUCCESS) return Bad("invalid JSON");
      od::value v = field.value();
      if (key == "before" || key == "after") {
        od::json_type type;
        if (v.type().get(type) != simdjson::SUCCESS) return Bad("invalid JSON");
        std::optional<std::string_view>& slot = key == "before" ? e->before : e->after;
        if (type == od::json_type::null) {
          slot.reset();
          continue;
        }
        if (type != od::json_type::object) {
          return Bad("field '" + std::string(key) + "' must be an object or null, got " + Token(v));
        }
        od::object part;
        std::string_view raw;
        if (v.get_object().get(part) != simdjson::SUCCESS || part.raw_json().get(raw)) {
          return Bad("invalid JSON in field '" + std::string(key) + "'");
        }
        slot = raw;
      } else if (key == "op") {
        std::string_view op;
        if (v.get_string().get(op) != simdjson::SUCCESS) {
          return Bad("field 'op' must be a string, got " + Token(v));
        }
        e->op = op;
      } else if (key == "schema") {
        e->saw_schema = true;
      } else if (key == "payload") {
        e->saw_payload = true;
        if (unwrap) {
          od::object payload;
          if (v.get_object().get(payload) != simdjson::SUCCESS) {
            return Bad("field 'payload' must be an object, got " + Token(v));
          }
          FLOE_RETURN_NOT_OK(ReadObject(payload, false, e));
        }
      }
    }
    return Status::OK();
  }

  Status DecodeRow(std::string_view which, std::string_view text, RecordBatch* out) {
    Status st = rows->Decode(text, which, 1, out);
    if (st.ok()) return st;
    std::string msg = st.message();
    std::string prefix = std::string(which) + ":1: ";
    if (msg.rfind(prefix, 0) == 0) msg = msg.substr(prefix.size());
    return Bad("in '" + std::string(which) + "': " + msg);
  }

  Status DecodeEvent(std::string_view value, RecordBatch* out, Column* kinds) {
    buffer.assign(value);
    buffer.append(simdjson::SIMDJSON_PADDING, '\0');
    od::document doc;
    if (parser.iterate(buffer.data(), value.size(), buffer.size()).get(doc) != simdjson::SUCCESS) {
      return Bad("invalid JSON");
    }
    od::object top;
    simdjson::error_code err = doc.get_object().get(top);
    if (err == simdjson::INCORRECT_TYPE) return Bad("the record value is not a JSON object");
    if (err) return Bad(std::string("invalid JSON: ") + simdjson::error_message(err));
    Envelope e;
    FLOE_RETURN_NOT_OK(ReadObject(top, options.schema_include, &e));
    if (options.schema_include && !e.saw_payload) {
      return Bad("'debezium-json.schema-include' = 'true' but the record has no \"payload\" field");
    }
    if (!e.op) {
      if (!options.schema_include && e.saw_schema && e.saw_payload) {
        return Bad(
            "the record has \"schema\" and \"payload\" fields but no \"op\": set "
            "'debezium-json.schema-include' = 'true' for events with Debezium's schema envelope");
      }
      return Bad("field 'op' is missing");
    }
    std::string_view op = *e.op;
    auto need = [&](std::string_view name, const std::optional<std::string_view>& part,
                    bool replica_hint) -> Status {
      if (part) return Status::OK();
      return Bad("field '" + std::string(name) + "' is null or missing for op '" + std::string(op) +
                 "'" + std::string(replica_hint ? kReplicaIdentity : ""));
    };
    if (op == "c" || op == "r") {
      FLOE_RETURN_NOT_OK(need("after", e.after, false));
      FLOE_RETURN_NOT_OK(DecodeRow("after", *e.after, out));
      kinds->AppendBytes("+I");
    } else if (op == "u") {
      FLOE_RETURN_NOT_OK(need("before", e.before, true));
      FLOE_RETURN_NOT_OK(need("after", e.after, false));
      FLOE_RETURN_NOT_OK(DecodeRow("before", *e.before, out));
      kinds->AppendBytes("-U");
      FLOE_RETURN_NOT_OK(DecodeRow("after", *e.after, out));
      kinds->AppendBytes("+U");
    } else if (op == "d") {
      FLOE_RETURN_NOT_OK(need("before", e.before, true));
      FLOE_RETURN_NOT_OK(DecodeRow("before", *e.before, out));
      kinds->AppendBytes("-D");
    } else {
      return Bad("field 'op' has unknown value '" + std::string(op.substr(0, 40)) +
                 "' (expected c, r, u or d)");
    }
    return Status::OK();
  }
};

DebeziumJsonDecoder::DebeziumJsonDecoder(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
DebeziumJsonDecoder::~DebeziumJsonDecoder() = default;

Result<std::unique_ptr<DebeziumJsonDecoder>> DebeziumJsonDecoder::Make(
    std::shared_ptr<const BatchSchema> columns, DebeziumJsonOptions options) {
  auto impl = std::make_unique<Impl>();
  impl->options = options;
  // Errors are handled per event here (an update is two rows: both or neither).
  FLOE_ASSIGN_OR_RAISE(impl->rows, json::JsonLinesDecoder::Make(std::move(columns), {}));
  return std::make_unique<DebeziumJsonDecoder>(std::move(impl));
}

Status DebeziumJsonDecoder::Decode(std::string_view value, RecordBatch* rows, Column* kinds) {
  size_t rows_before = rows->num_rows();
  size_t kinds_before = kinds->size();
  Status st = impl_->DecodeEvent(value, rows, kinds);
  if (st.ok()) return st;
  rows->Truncate(rows_before);
  kinds->Truncate(kinds_before);
  if (impl_->options.ignore_parse_errors) {
    ++impl_->skipped;
    return Status::OK();
  }
  return st;
}

int64_t DebeziumJsonDecoder::skipped() const { return impl_->skipped; }

}  // namespace floe::connectors
