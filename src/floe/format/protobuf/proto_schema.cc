#include "floe/format/protobuf/proto_schema.h"

#include <cctype>
#include <map>

namespace floe::protobuf {

const ProtoField* ProtoMessage::FindByNumber(int32_t number) const {
  for (const ProtoField& f : fields) {
    if (f.number == number) return &f;
  }
  return nullptr;
}

const ProtoField* ProtoMessage::FindByName(std::string_view name) const {
  for (const ProtoField& f : fields) {
    if (f.name == name) return &f;
  }
  return nullptr;
}

Result<const ProtoMessage*> ProtoSchema::MessageAt(const std::vector<int64_t>& indexes) const {
  const std::vector<const ProtoMessage*>* level = &top_;
  const ProtoMessage* found = nullptr;
  for (int64_t i : indexes) {
    if (i < 0 || static_cast<size_t>(i) >= level->size()) {
      return Status::InvalidArgument("message index " + std::to_string(i) + " of " +
                                     std::to_string(level->size()) + " messages");
    }
    found = (*level)[static_cast<size_t>(i)];
    level = &found->nested;
  }
  if (found == nullptr) return Status::InvalidArgument("no message index");
  return found;
}

namespace {

constexpr size_t kMaxNesting = 64;

ScalarType ScalarOf(std::string_view t) {
  static const std::map<std::string_view, ScalarType> kScalars = {
      {"double", ScalarType::kDouble},     {"float", ScalarType::kFloat},
      {"int32", ScalarType::kInt32},       {"int64", ScalarType::kInt64},
      {"uint32", ScalarType::kUint32},     {"uint64", ScalarType::kUint64},
      {"sint32", ScalarType::kSint32},     {"sint64", ScalarType::kSint64},
      {"fixed32", ScalarType::kFixed32},   {"fixed64", ScalarType::kFixed64},
      {"sfixed32", ScalarType::kSfixed32}, {"sfixed64", ScalarType::kSfixed64},
      {"bool", ScalarType::kBool},         {"string", ScalarType::kString},
      {"bytes", ScalarType::kBytes}};
  auto it = kScalars.find(t);
  return it == kScalars.end() ? ScalarType::kNone : it->second;
}

}  // namespace

// Recursive descent over the tokens of one .proto file.
class ProtoParser {
 public:
  explicit ProtoParser(std::string_view text) : text_(text) {}

  Result<std::shared_ptr<const ProtoSchema>> Parse() {
    schema_ = std::make_shared<ProtoSchema>();
    schema_->text_ = std::string(text_);
    AddTimestamp();
    FLOE_RETURN_NOT_OK(Next());
    while (!token_.empty()) {
      if (token_ == "syntax" || token_ == "edition") {
        FLOE_RETURN_NOT_OK(Next());
        FLOE_RETURN_NOT_OK(Expect("="));
        proto3_ = token_ == "\"proto3\"" || token_ == "'proto3'";
        FLOE_RETURN_NOT_OK(Next());
        FLOE_RETURN_NOT_OK(Expect(";"));
      } else if (token_ == "package") {
        FLOE_RETURN_NOT_OK(Next());
        package_ = token_;
        FLOE_RETURN_NOT_OK(Next());
        FLOE_RETURN_NOT_OK(Expect(";"));
      } else if (token_ == "import" || token_ == "option") {
        FLOE_RETURN_NOT_OK(SkipStatement());
      } else if (token_ == "message") {
        FLOE_ASSIGN_OR_RAISE(const ProtoMessage* m, ParseMessage(package_, 0));
        schema_->top_.push_back(m);
      } else if (token_ == "enum") {
        FLOE_RETURN_NOT_OK(ParseEnum(package_));
      } else if (token_ == "service" || token_ == "extend") {
        FLOE_RETURN_NOT_OK(SkipStatement());
      } else if (token_ == ";") {
        FLOE_RETURN_NOT_OK(Next());
      } else {
        return Error("a message, enum, syntax, package, import or option");
      }
    }
    FLOE_RETURN_NOT_OK(Resolve());
    return std::shared_ptr<const ProtoSchema>(schema_);
  }

 private:
  // A field's type to resolve once every name is known, and the scope it was written in.
  struct Pending {
    ProtoField* field;
    std::string scope;
    int line;
  };

  Status Error(const std::string& expected) const {
    return Status::InvalidArgument("protobuf schema line " + std::to_string(line_) + ": expected " +
                                   expected + ", got " +
                                   (token_.empty() ? "the end" : "'" + token_ + "'"));
  }

  // The next token into token_ ("" at the end): an identifier (dots included), a number, a
  // quoted string (quotes kept) or one symbol. Comments and whitespace are skipped.
  Status Next() {
    for (;;) {
      while (pos_ < text_.size() && std::isspace(static_cast<unsigned char>(text_[pos_]))) {
        if (text_[pos_] == '\n') ++line_;
        ++pos_;
      }
      if (text_.compare(pos_, 2, "//") == 0) {
        while (pos_ < text_.size() && text_[pos_] != '\n') ++pos_;
        continue;
      }
      if (text_.compare(pos_, 2, "/*") == 0) {
        const size_t end = text_.find("*/", pos_ + 2);
        if (end == std::string_view::npos) return Error("the end of a /* comment */");
        for (size_t i = pos_; i < end; ++i) line_ += text_[i] == '\n' ? 1 : 0;
        pos_ = end + 2;
        continue;
      }
      break;
    }
    if (pos_ >= text_.size()) {
      token_.clear();
      return Status::OK();
    }
    const size_t start = pos_;
    const char c = text_[pos_];
    if (c == '"' || c == '\'') {
      ++pos_;
      while (pos_ < text_.size() && text_[pos_] != c) pos_ += text_[pos_] == '\\' ? 2 : 1;
      if (pos_ >= text_.size()) return Error("the end of a string");
      ++pos_;
    } else if (std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.' || c == '-' ||
               c == '+') {
      ++pos_;
      while (pos_ < text_.size() && (std::isalnum(static_cast<unsigned char>(text_[pos_])) ||
                                     text_[pos_] == '_' || text_[pos_] == '.')) {
        ++pos_;
      }
    } else {
      ++pos_;
    }
    token_ = std::string(text_.substr(start, pos_ - start));
    return Status::OK();
  }

  Status Expect(std::string_view what) {
    if (token_ != what) return Error("'" + std::string(what) + "'");
    return Next();
  }

  // Skips to the end of a statement: its ';' or its balanced { ... } block.
  Status SkipStatement() {
    int depth = 0;
    while (!token_.empty()) {
      if (token_ == "{") ++depth;
      if (token_ == "}" && --depth == 0) return Next();
      if (token_ == ";" && depth == 0) return Next();
      FLOE_RETURN_NOT_OK(Next());
    }
    return Error("';' or '}'");
  }

  Result<int32_t> Number() {
    int64_t v = 0;
    bool digits = !token_.empty() && token_.size() <= 10;
    for (char ch : token_) {
      if (!digits || !std::isdigit(static_cast<unsigned char>(ch))) {
        digits = false;
        break;
      }
      v = v * 10 + (ch - '0');
    }
    if (!digits || v < 1 || v > 536870911) return Error("a field number in 1..536870911");
    FLOE_RETURN_NOT_OK(Next());
    return static_cast<int32_t>(v);
  }

  // A field after its label: `type name = N [options];`; `map<K, V> name = N;` is repeated.
  Status ParseField(ProtoMessage* m, const std::string& scope, bool repeated, bool presence) {
    ProtoField f;
    f.repeated = repeated;
    f.has_presence = presence;
    const int line = line_;
    if (token_ == "map") {
      FLOE_RETURN_NOT_OK(Next());
      while (token_ != ">" && !token_.empty()) FLOE_RETURN_NOT_OK(Next());
      FLOE_RETURN_NOT_OK(Expect(">"));
      f.repeated = true;
      f.scalar = ScalarType::kBytes;  // entries are only skipped
    } else {
      f.scalar = ScalarOf(token_);
      if (f.scalar == ScalarType::kNone) f.type_name = token_;
      FLOE_RETURN_NOT_OK(Next());
    }
    if (token_.empty() ||
        !(std::isalpha(static_cast<unsigned char>(token_[0])) || token_[0] == '_')) {
      return Error("a field name");
    }
    f.name = token_;
    FLOE_RETURN_NOT_OK(Next());
    FLOE_RETURN_NOT_OK(Expect("="));
    FLOE_ASSIGN_OR_RAISE(f.number, Number());
    if (token_ == "[") {
      while (token_ != "]" && !token_.empty()) FLOE_RETURN_NOT_OK(Next());
      FLOE_RETURN_NOT_OK(Expect("]"));
    }
    FLOE_RETURN_NOT_OK(Expect(";"));
    if (m->FindByNumber(f.number) != nullptr || m->FindByName(f.name) != nullptr) {
      return Status::InvalidArgument("protobuf schema line " + std::to_string(line) + ": message " +
                                     m->full_name + " has field '" + f.name + "' or number " +
                                     std::to_string(f.number) + " twice");
    }
    m->fields.push_back(std::move(f));
    if (m->fields.back().scalar == ScalarType::kNone) pending_.push_back({nullptr, scope, line});
    return Status::OK();
  }

  Result<const ProtoMessage*> ParseMessage(const std::string& scope, size_t depth) {
    if (depth > kMaxNesting) return Error("messages nested less deeply");
    FLOE_RETURN_NOT_OK(Next());  // 'message'
    auto owned = std::make_unique<ProtoMessage>();
    ProtoMessage* m = owned.get();
    m->full_name = (scope.empty() ? "" : scope + ".") + token_;
    schema_->messages_.push_back(std::move(owned));
    names_[m->full_name] = m;
    FLOE_RETURN_NOT_OK(Next());
    FLOE_RETURN_NOT_OK(Expect("{"));
    const size_t first_pending = pending_.size();
    FLOE_RETURN_NOT_OK(ParseMessageBody(m, depth, /*in_oneof=*/false));
    // Pending entries point at fields by position: the vector is complete now.
    size_t k = first_pending;
    for (ProtoField& f : m->fields) {
      if (f.scalar != ScalarType::kNone) continue;
      while (k < pending_.size() && pending_[k].field != nullptr) ++k;
      if (k < pending_.size()) {
        pending_[k].field = &f;
        pending_[k].scope = m->full_name;
      }
    }
    return m;
  }

  Status ParseMessageBody(ProtoMessage* m, size_t depth, bool in_oneof) {
    while (token_ != "}") {
      if (token_.empty()) return Error("'}'");
      if (token_ == "message") {
        FLOE_ASSIGN_OR_RAISE(const ProtoMessage* nested, ParseMessage(m->full_name, depth + 1));
        m->nested.push_back(nested);
      } else if (token_ == "enum") {
        FLOE_RETURN_NOT_OK(ParseEnum(m->full_name));
      } else if (token_ == "oneof") {
        if (in_oneof) return Error("a field (a oneof holds fields only)");
        FLOE_RETURN_NOT_OK(Next());
        FLOE_RETURN_NOT_OK(Next());  // its name
        FLOE_RETURN_NOT_OK(Expect("{"));
        FLOE_RETURN_NOT_OK(ParseMessageBody(m, depth, /*in_oneof=*/true));
      } else if (token_ == "option" || token_ == "reserved" || token_ == "extensions" ||
                 token_ == "extend") {
        FLOE_RETURN_NOT_OK(SkipStatement());
      } else if (token_ == ";") {
        FLOE_RETURN_NOT_OK(Next());
      } else if (token_ == "repeated" || token_ == "optional" || token_ == "required") {
        const bool repeated = token_ == "repeated";
        const bool presence = token_ != "repeated";
        FLOE_RETURN_NOT_OK(Next());
        FLOE_RETURN_NOT_OK(ParseField(m, "", repeated, presence));
      } else {
        FLOE_RETURN_NOT_OK(ParseField(m, "", false, in_oneof || !proto3_));
      }
    }
    return Next();  // '}'
  }

  Status ParseEnum(const std::string& scope) {
    FLOE_RETURN_NOT_OK(Next());  // 'enum'
    auto e = std::make_unique<ProtoEnum>();
    e->full_name = (scope.empty() ? "" : scope + ".") + token_;
    FLOE_RETURN_NOT_OK(Next());
    FLOE_RETURN_NOT_OK(Expect("{"));
    while (token_ != "}") {
      if (token_.empty()) return Error("'}'");
      if (token_ == "option" || token_ == "reserved") {
        FLOE_RETURN_NOT_OK(SkipStatement());
        continue;
      }
      if (token_ == ";") {
        FLOE_RETURN_NOT_OK(Next());
        continue;
      }
      std::string name = token_;
      FLOE_RETURN_NOT_OK(Next());
      FLOE_RETURN_NOT_OK(Expect("="));
      int64_t v = 0;
      bool negative = !token_.empty() && token_[0] == '-';
      const std::string digits = negative ? token_.substr(1) : token_;
      if (digits.empty() || digits.size() > 10) return Error("an enum value");
      for (char ch : digits) {
        if (!std::isdigit(static_cast<unsigned char>(ch))) return Error("an enum value");
        v = v * 10 + (ch - '0');
      }
      FLOE_RETURN_NOT_OK(Next());
      if (token_ == "[") {
        while (token_ != "]" && !token_.empty()) FLOE_RETURN_NOT_OK(Next());
        FLOE_RETURN_NOT_OK(Expect("]"));
      }
      FLOE_RETURN_NOT_OK(Expect(";"));
      e->values.emplace_back(std::move(name), static_cast<int32_t>(negative ? -v : v));
    }
    FLOE_RETURN_NOT_OK(Next());
    enum_names_[e->full_name] = e.get();
    schema_->enums_.push_back(std::move(e));
    return Status::OK();
  }

  void AddTimestamp() {
    auto ts = std::make_unique<ProtoMessage>();
    ts->full_name = "google.protobuf.Timestamp";
    ts->fields = {ProtoField{"seconds", 1, ScalarType::kInt64, "", nullptr, nullptr, false, false},
                  ProtoField{"nanos", 2, ScalarType::kInt32, "", nullptr, nullptr, false, false}};
    names_[ts->full_name] = ts.get();
    schema_->messages_.push_back(std::move(ts));
  }

  // Protobuf's scoping: the innermost enclosing scope that has the name wins.
  Status Resolve() {
    for (const Pending& p : pending_) {
      if (p.field == nullptr) continue;
      std::string name = p.field->type_name;
      std::vector<std::string> candidates;
      if (!name.empty() && name[0] == '.') {
        candidates.push_back(name.substr(1));
      } else {
        std::string scope = p.scope;
        for (;;) {
          candidates.push_back(scope.empty() ? name : scope + "." + name);
          if (scope.empty()) break;
          const size_t dot = scope.rfind('.');
          scope = dot == std::string::npos ? "" : scope.substr(0, dot);
        }
      }
      for (const std::string& c : candidates) {
        if (auto it = names_.find(c); it != names_.end()) {
          p.field->message = it->second;
          p.field->has_presence = !p.field->repeated;  // a message field is null when absent
          break;
        }
        if (auto it = enum_names_.find(c); it != enum_names_.end()) {
          p.field->enumeration = it->second;
          break;
        }
      }
      if (p.field->message == nullptr && p.field->enumeration == nullptr) {
        return Status::InvalidArgument("protobuf schema line " + std::to_string(p.line) +
                                       ": field '" + p.field->name + "' has type '" + name +
                                       "', which the schema does not define (imports other than "
                                       "google/protobuf/timestamp.proto are not read)");
      }
    }
    return Status::OK();
  }

  std::string_view text_;
  size_t pos_ = 0;
  int line_ = 1;
  std::string token_;
  bool proto3_ = false;
  std::string package_;
  std::shared_ptr<ProtoSchema> schema_;
  std::vector<Pending> pending_;
  std::map<std::string, ProtoMessage*> names_;
  std::map<std::string, const ProtoEnum*> enum_names_;
};

Result<std::shared_ptr<const ProtoSchema>> ParseProto(std::string_view text) {
  return ProtoParser(text).Parse();
}

}  // namespace floe::protobuf
