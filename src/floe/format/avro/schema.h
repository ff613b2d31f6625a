#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "floe/common/status.h"

namespace floe::avro {

// Avro schema types (Avro 1.11 spec). Logical types are attributes of a physical type.
enum class Type : uint8_t {
  kNull,
  kBoolean,
  kInt,
  kLong,
  kFloat,
  kDouble,
  kBytes,
  kString,
  kRecord,
  kEnum,
  kArray,
  kMap,
  kUnion,
  kFixed,
};

// "null", "boolean", ..., "fixed" (the spec's spelling).
std::string_view TypeName(Type type);

struct Node;

// One field of a record node. `type` points into the owning Schema.
struct FieldNode {
  std::string name;
  const Node* type = nullptr;
  std::optional<int32_t> field_id;  // Iceberg "field-id"
};

// A node of a parsed schema tree. Nodes are owned by their Schema and refer to each other with
// non-owning pointers, so recursive named types (a record that contains itself) are cycles, not
// copies. Only the members that belong to `type` are meaningful.
struct Node {
  Type type = Type::kNull;
  std::string name;          // full name (namespace.name) of record / enum / fixed
  std::string logical_type;  // "logicalType" attribute, "" when absent
  int32_t precision = 0;     // decimal logical type
  int32_t scale = 0;         // decimal logical type

  std::vector<FieldNode> fields;      // kRecord
  std::vector<std::string> symbols;   // kEnum
  const Node* items = nullptr;        // kArray: element type; kMap: value type
  std::vector<const Node*> branches;  // kUnion
  int64_t fixed_size = 0;             // kFixed

  std::optional<int32_t> element_id;  // kArray: Iceberg "element-id"
  std::optional<int32_t> key_id;      // kMap: Iceberg "key-id"
  std::optional<int32_t> value_id;    // kMap: Iceberg "value-id"

  // Lower bound of the encoded size of a datum of this type in bytes. Readers use it to reject
  // item counts that cannot fit in the remaining input before allocating for them.
  int64_t min_encoded_size = 0;

  // Index of the record field called `name`, or -1 (also -1 when this is not a record).
  int FieldIndex(std::string_view name) const;
  // Index of the union branch of type `t` (first one), or -1.
  int BranchIndex(Type t) const;
};

// Schema is a parsed Avro schema plus the JSON text it was parsed from. The text is kept
// verbatim because writers store it in file headers and Iceberg readers depend on attributes
// (field-id, element-id, key-id, value-id) that a re-serialization could drop.
// Immutable once built; share it as shared_ptr<const Schema> across threads.
class Schema {
 public:
  // Only ParseSchema can make one (the key's constructor is private to the parser).
  class Key {
    friend class SchemaParser;
    Key() = default;
  };
  explicit Schema(Key) {}

  const Node& root() const { return *root_; }
  const std::string& json() const { return json_; }

 private:
  friend class SchemaParser;

  std::string json_;
  std::vector<std::unique_ptr<Node>> nodes_;  // owns every node; root_ points into it
  const Node* root_ = nullptr;
};

// Parses an Avro schema from JSON. Named types may be referenced by full name or by name
// relative to the enclosing namespace, also recursively. Unknown attributes are allowed (kept
// only in json()). Returns InvalidArgument describing the first problem found.
Result<std::shared_ptr<const Schema>> ParseSchema(std::string_view json);

}  // namespace floe::avro
