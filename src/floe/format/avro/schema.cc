#include "floe/format/avro/schema.h"

#include <algorithm>
#include <limits>
#include <unordered_map>
#include <unordered_set>

#include <nlohmann/json.hpp>

#include "floe/common/json.h"

namespace floe::avro {

std::string_view TypeName(Type type) {
  switch (type) {
    case Type::kNull:
      return "null";
    case Type::kBoolean:
      return "boolean";
    case Type::kInt:
      return "int";
    case Type::kLong:
      return "long";
    case Type::kFloat:
      return "float";
    case Type::kDouble:
      return "double";
    case Type::kBytes:
      return "bytes";
    case Type::kString:
      return "string";
    case Type::kRecord:
      return "record";
    case Type::kEnum:
      return "enum";
    case Type::kArray:
      return "array";
    case Type::kMap:
      return "map";
    case Type::kUnion:
      return "union";
    case Type::kFixed:
      return "fixed";
  }
  return "unknown";
}

int Node::FieldIndex(std::string_view field_name) const {
  for (size_t i = 0; i < fields.size(); ++i) {
    if (fields[i].name == field_name) return static_cast<int>(i);
  }
  return -1;
}

int Node::BranchIndex(Type t) const {
  for (size_t i = 0; i < branches.size(); ++i) {
    if (branches[i]->type == t) return static_cast<int>(i);
  }
  return -1;
}

namespace {

std::optional<Type> PrimitiveType(std::string_view name) {
  if (name == "null") return Type::kNull;
  if (name == "boolean") return Type::kBoolean;
  if (name == "int") return Type::kInt;
  if (name == "long") return Type::kLong;
  if (name == "float") return Type::kFloat;
  if (name == "double") return Type::kDouble;
  if (name == "bytes") return Type::kBytes;
  if (name == "string") return Type::kString;
  return std::nullopt;
}

// Avro names are [A-Za-z_][A-Za-z0-9_]*; checking here means floe never writes a schema that
// other readers (avsc, Java) refuse.
bool ValidName(std::string_view name) {
  if (name.empty()) return false;
  for (size_t i = 0; i < name.size(); ++i) {
    char c = name[i];
    bool alpha = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
    if (!alpha && !(i > 0 && c >= '0' && c <= '9')) return false;
  }
  return true;
}

bool ValidFullName(std::string_view name) {
  size_t start = 0;
  while (true) {
    size_t dot = name.find('.', start);
    if (!ValidName(name.substr(start, dot == std::string_view::npos ? dot : dot - start))) {
      return false;
    }
    if (dot == std::string_view::npos) return true;
    start = dot + 1;
  }
}

const Json* Find(const Json& obj, const char* key) {
  auto it = obj.find(key);
  return it == obj.end() ? nullptr : &*it;
}

int64_t SaturatingAdd(int64_t a, int64_t b) {
  constexpr int64_t kCap = int64_t{1} << 50;
  return std::min(kCap, a + std::min(kCap, b));
}

}  // namespace

class SchemaParser {
 public:
  static Result<std::shared_ptr<const Schema>> Run(const Json& j, std::string_view text) {
    auto schema = std::make_shared<Schema>(Schema::Key());
    schema->json_ = std::string(text);
    SchemaParser parser(schema.get());
    FLOE_ASSIGN_OR_RAISE(schema->root_, parser.Parse(j, "", ""));
    parser.ComputeMinSizes();
    return std::shared_ptr<const Schema>(std::move(schema));
  }

 private:
  explicit SchemaParser(Schema* schema) : schema_(schema) {}

  Result<const Node*> Parse(const Json& j, const std::string& ns, const std::string& where) {
    if (++depth_ > 256) return Error(where, "schema nested too deeply");
    auto r = ParseInner(j, ns, where);
    --depth_;
    return r;
  }

  void ComputeMinSizes() {
    std::unordered_map<const Node*, int> state;
    for (auto& n : schema_->nodes_) MinSize(n.get(), &state);
  }

  static Status Error(const std::string& where, std::string_view what) {
    return Status::InvalidArgument("avro schema" + (where.empty() ? "" : " at " + where) + ": " +
                                   std::string(what));
  }

  Node* NewNode(Type t) {
    schema_->nodes_.push_back(std::make_unique<Node>());
    Node* n = schema_->nodes_.back().get();
    n->type = t;
    return n;
  }

  Result<const Node*> ParseInner(const Json& j, const std::string& ns, const std::string& where) {
    if (j.is_string()) return Resolve(j.get_ref<const std::string&>(), ns, where);
    if (j.is_array()) return ParseUnion(j, ns, where);
    if (!j.is_object()) return Error(where, "expected a type name, object or array");
    const Json* type = Find(j, "type");
    if (type == nullptr) return Error(where, "object without \"type\"");
    if (!type->is_string()) {
      return Error(where, "\"type\" must be a string");
    }
    const std::string& t = type->get_ref<const std::string&>();
    Node* n = nullptr;
    if (t == "record" || t == "error") {
      FLOE_ASSIGN_OR_RAISE(n, ParseRecord(j, ns, where));
    } else if (t == "enum") {
      FLOE_ASSIGN_OR_RAISE(n, ParseEnum(j, ns, where));
    } else if (t == "fixed") {
      FLOE_ASSIGN_OR_RAISE(n, ParseFixed(j, ns, where));
    } else if (t == "array") {
      const Json* items = Find(j, "items");
      if (items == nullptr) return Error(where, "array without \"items\"");
      n = NewNode(Type::kArray);
      FLOE_ASSIGN_OR_RAISE(n->items, Parse(*items, ns, where + "[]"));
      FLOE_ASSIGN_OR_RAISE(n->element_id, OptionalInt(j, "element-id", where));
    } else if (t == "map") {
      const Json* values = Find(j, "values");
      if (values == nullptr) return Error(where, "map without \"values\"");
      n = NewNode(Type::kMap);
      FLOE_ASSIGN_OR_RAISE(n->items, Parse(*values, ns, where + "{}"));
      FLOE_ASSIGN_OR_RAISE(n->key_id, OptionalInt(j, "key-id", where));
      FLOE_ASSIGN_OR_RAISE(n->value_id, OptionalInt(j, "value-id", where));
    } else if (auto prim = PrimitiveType(t)) {
      n = NewNode(*prim);
    } else {
      // {"type": "SomeRecord"} refers to a named type; it cannot carry attributes of its own.
      return Resolve(t, ns, where);
    }
    FLOE_RETURN_NOT_OK(ParseLogicalType(j, n, where));
    return n;
  }

  Result<const Node*> Resolve(const std::string& name, const std::string& ns,
                              const std::string& where) {
    if (auto prim = PrimitiveType(name)) return static_cast<const Node*>(NewNode(*prim));
    if (name.find('.') == std::string::npos && !ns.empty()) {
      auto it = named_.find(ns + "." + name);
      if (it != named_.end()) return it->second;
    }
    auto it = named_.find(name);
    if (it != named_.end()) return it->second;
    return Error(where, "unknown type \"" + name + "\"");
  }

  Result<const Node*> ParseUnion(const Json& j, const std::string& ns, const std::string& where) {
    Node* n = NewNode(Type::kUnion);
    std::unordered_set<std::string> seen;
    for (size_t i = 0; i < j.size(); ++i) {
      FLOE_ASSIGN_OR_RAISE(const Node* b, Parse(j[i], ns, where + "<" + std::to_string(i) + ">"));
      if (b->type == Type::kUnion) return Error(where, "union directly inside a union");
      bool named = b->type == Type::kRecord || b->type == Type::kEnum || b->type == Type::kFixed;
      std::string key = named ? b->name : std::string(TypeName(b->type));
      if (!seen.insert(key).second) return Error(where, "union holds \"" + key + "\" twice");
      n->branches.push_back(b);
    }
    if (n->branches.empty()) return Error(where, "empty union");
    return static_cast<const Node*>(n);
  }

  // Sets node->name to the full name and registers it. Returns the namespace for nested types.
  Result<std::string> ParseName(const Json& j, const std::string& ns, const std::string& where,
                                Node* node) {
    const Json* name = Find(j, "name");
    if (name == nullptr || !name->is_string()) return Error(where, "named type without \"name\"");
    const std::string& short_name = name->get_ref<const std::string&>();
    std::string full;
    if (short_name.find('.') != std::string::npos) {
      full = short_name;
    } else {
      std::string space = ns;
      const Json* nsj = Find(j, "namespace");
      if (nsj != nullptr) {
        if (!nsj->is_string() && !nsj->is_null()) return Error(where, "bad \"namespace\"");
        space = nsj->is_string() ? nsj->get_ref<const std::string&>() : "";
      }
      full = space.empty() ? short_name : space + "." + short_name;
    }
    if (!ValidFullName(full)) return Error(where, "invalid name \"" + full + "\"");
    if (PrimitiveType(full)) return Error(where, "name \"" + full + "\" is a primitive type");
    if (!named_.emplace(full, node).second) {
      return Error(where, "type \"" + full + "\" defined twice");
    }
    node->name = full;
    size_t dot = full.rfind('.');
    return dot == std::string::npos ? std::string() : full.substr(0, dot);
  }

  Result<Node*> ParseRecord(const Json& j, const std::string& ns, const std::string& where) {
    Node* n = NewNode(Type::kRecord);
    // Registered before the fields so that fields can refer to the record itself.
    FLOE_ASSIGN_OR_RAISE(std::string inner_ns, ParseName(j, ns, where, n));
    const Json* fields = Find(j, "fields");
    if (fields == nullptr || !fields->is_array()) {
      return Error(where, "record \"" + n->name + "\" without a \"fields\" array");
    }
    std::string base = where.empty() ? n->name : where;
    for (const Json& f : *fields) {
      if (!f.is_object()) return Error(base, "record field is not an object");
      const Json* fname = Find(f, "name");
      if (fname == nullptr || !fname->is_string()) return Error(base, "record field without name");
      FieldNode field;
      field.name = fname->get_ref<const std::string&>();
      std::string fwhere = base + "." + field.name;
      if (!ValidName(field.name)) return Error(fwhere, "invalid field name");
      if (n->FieldIndex(field.name) >= 0) return Error(fwhere, "duplicate field name");
      const Json* ftype = Find(f, "type");
      if (ftype == nullptr) return Error(fwhere, "field without \"type\"");
      FLOE_ASSIGN_OR_RAISE(field.type, Parse(*ftype, inner_ns, fwhere));
      FLOE_ASSIGN_OR_RAISE(field.field_id, OptionalInt(f, "field-id", fwhere));
      n->fields.push_back(std::move(field));
    }
    return n;
  }

  Result<Node*> ParseEnum(const Json& j, const std::string& ns, const std::string& where) {
    Node* n = NewNode(Type::kEnum);
    FLOE_ASSIGN_OR_RAISE(std::string inner_ns, ParseName(j, ns, where, n));
    (void)inner_ns;
    const Json* symbols = Find(j, "symbols");
    if (symbols == nullptr || !symbols->is_array()) {
      return Error(where, "enum \"" + n->name + "\" without a \"symbols\" array");
    }
    for (const Json& s : *symbols) {
      if (!s.is_string() || !ValidName(s.get_ref<const std::string&>())) {
        return Error(where, "enum \"" + n->name + "\" has an invalid symbol");
      }
      const std::string& sym = s.get_ref<const std::string&>();
      if (std::find(n->symbols.begin(), n->symbols.end(), sym) != n->symbols.end()) {
        return Error(where, "enum \"" + n->name + "\" has symbol \"" + sym + "\" twice");
      }
      n->symbols.push_back(sym);
    }
    return n;
  }

  Result<Node*> ParseFixed(const Json& j, const std::string& ns, const std::string& where) {
    Node* n = NewNode(Type::kFixed);
    FLOE_ASSIGN_OR_RAISE(std::string inner_ns, ParseName(j, ns, where, n));
    (void)inner_ns;
    const Json* size = Find(j, "size");
    if (size == nullptr || !size->is_number_integer() || size->get<int64_t>() < 0 ||
        size->get<int64_t>() > std::numeric_limits<int32_t>::max()) {
      return Error(where, "fixed \"" + n->name + "\" needs a non-negative integer \"size\"");
    }
    n->fixed_size = size->get<int64_t>();
    return n;
  }

  Status ParseLogicalType(const Json& j, Node* n, const std::string& where) {
    const Json* lt = Find(j, "logicalType");
    if (lt == nullptr) return Status::OK();
    if (!lt->is_string()) return Error(where, "\"logicalType\" must be a string");
    n->logical_type = lt->get_ref<const std::string&>();
    FLOE_ASSIGN_OR_RAISE(auto precision, OptionalInt(j, "precision", where));
    FLOE_ASSIGN_OR_RAISE(auto scale, OptionalInt(j, "scale", where));
    n->precision = precision.value_or(0);
    n->scale = scale.value_or(0);
    return Status::OK();
  }

  static Result<std::optional<int32_t>> OptionalInt(const Json& j, const char* key,
                                                    const std::string& where) {
    const Json* v = Find(j, key);
    if (v == nullptr) return std::optional<int32_t>();
    if (!v->is_number_integer()) return Error(where, std::string("\"") + key + "\" must be an int");
    int64_t x =
        v->is_number_unsigned()
            ? static_cast<int64_t>(std::min<uint64_t>(v->get<uint64_t>(), uint64_t{1} << 40))
            : v->get<int64_t>();
    if (x < std::numeric_limits<int32_t>::min() || x > std::numeric_limits<int32_t>::max()) {
      return Error(where, std::string("\"") + key + "\" out of int range");
    }
    return std::optional<int32_t>(static_cast<int32_t>(x));
  }

  // Fixpoint-free lower bound: a type reached again while being computed (recursion) counts 0.
  static int64_t MinSize(Node* n, std::unordered_map<const Node*, int>* state) {
    auto [it, fresh] = state->emplace(n, 1);
    if (!fresh) return it->second == 2 ? n->min_encoded_size : 0;
    int64_t size = 0;
    switch (n->type) {
      case Type::kNull:
        size = 0;
        break;
      case Type::kFloat:
        size = 4;
        break;
      case Type::kDouble:
        size = 8;
        break;
      case Type::kFixed:
        size = n->fixed_size;
        break;
      case Type::kRecord:
        for (auto& f : n->fields) {
          size = SaturatingAdd(size, MinSize(const_cast<Node*>(f.type), state));
        }
        break;
      case Type::kUnion: {
        int64_t best = std::numeric_limits<int64_t>::max();
        for (const Node* b : n->branches)
          best = std::min(best, MinSize(const_cast<Node*>(b), state));
        size = SaturatingAdd(1, best);
        break;
      }
      default:
        size = 1;
        break;  // boolean, varints, length-prefixed, block counts
    }
    if (n->type == Type::kArray || n->type == Type::kMap) {
      MinSize(const_cast<Node*>(n->items), state);
    }
    n->min_encoded_size = size;
    (*state)[n] = 2;
    return size;
  }

  Schema* schema_;
  std::unordered_map<std::string, const Node*> named_;
  int depth_ = 0;
};

Result<std::shared_ptr<const Schema>> ParseSchema(std::string_view json) {
  FLOE_ASSIGN_OR_RAISE(Json j,
                       ParseJson(json, JsonPath("avro schema", StatusCode::kInvalidArgument)));
  return SchemaParser::Run(j, json);
}

}  // namespace floe::avro
