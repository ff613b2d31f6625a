#pragma once
// A Protocol Buffers schema (.proto text, proto2 or proto3) as a schema registry holds it: the
// messages and enums a decoder needs, nothing of services or options.
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "floe/common/status.h"

namespace floe::protobuf {

enum class ScalarType : uint8_t {
  kNone,  // a message or enum field: see ProtoField::type_name
  kDouble,
  kFloat,
  kInt32,
  kInt64,
  kUint32,
  kUint64,
  kSint32,
  kSint64,
  kFixed32,
  kFixed64,
  kSfixed32,
  kSfixed64,
  kBool,
  kString,
  kBytes,
};

struct ProtoEnum;
struct ProtoMessage;

struct ProtoField {
  std::string name;
  int32_t number = 0;
  ScalarType scalar = ScalarType::kNone;
  std::string type_name;  // as written, for a message or enum field
  // Resolved by ParseProto for a message or enum field (google.protobuf.Timestamp included).
  const ProtoMessage* message = nullptr;
  const ProtoEnum* enumeration = nullptr;
  bool repeated = false;  // also a map field
  // Whether an absent field is null (proto2, proto3 `optional`, oneof members, messages) rather
  // than its type's default (a plain proto3 scalar or enum).
  bool has_presence = false;
};

struct ProtoEnum {
  std::string full_name;
  std::vector<std::pair<std::string, int32_t>> values;  // in declared order
};

struct ProtoMessage {
  std::string full_name;  // package.Outer.Inner
  std::vector<ProtoField> fields;
  std::vector<const ProtoMessage*> nested;  // nested messages, in declared order
  const ProtoField* FindByNumber(int32_t number) const;
  const ProtoField* FindByName(std::string_view name) const;
};

// The parsed file. Owns every message and enum; the pointers between them stay valid while it
// lives.
class ProtoSchema {
 public:
  const std::vector<const ProtoMessage*>& messages() const { return top_; }  // in declared order
  // The message Confluent's message indexes name: [i] is the i-th top-level message, [i, j] its
  // j-th nested message, and so on. InvalidArgument when an index is out of range.
  Result<const ProtoMessage*> MessageAt(const std::vector<int64_t>& indexes) const;
  const std::string& text() const { return text_; }

 private:
  friend class ProtoParser;
  std::string text_;
  std::vector<std::unique_ptr<ProtoMessage>> messages_;
  std::vector<std::unique_ptr<ProtoEnum>> enums_;
  std::vector<const ProtoMessage*> top_;
};

// Parses .proto text: syntax, package, imports (google/protobuf/timestamp.proto is known; other
// imported types are refused when a field uses them), options (skipped), messages (fields with
// proto2 / proto3 labels, maps, oneofs, nested messages and enums, reserved ranges) and enums;
// services are skipped. InvalidArgument with the line and what was expected.
Result<std::shared_ptr<const ProtoSchema>> ParseProto(std::string_view text);

}  // namespace floe::protobuf
