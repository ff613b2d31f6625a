#include "floe/cli/args.h"

#include <algorithm>
#include <charconv>

namespace floe::cli {
namespace {

bool Contains(const std::vector<std::string>& v, const std::string& s) {
  return std::find(v.begin(), v.end(), s) != v.end();
}

std::string Accepted(const Args::Spec& spec) {
  std::string out;
  for (const auto& n : spec.valued) out += (out.empty() ? "--" : ", --") + n + " VALUE";
  for (const auto& n : spec.switches) out += (out.empty() ? "--" : ", --") + n;
  return out.empty() ? "none" : out;
}

}  // namespace

Result<Args> Args::Parse(const std::vector<std::string>& argv, const Spec& spec) {
  Args args;
  for (size_t i = 0; i < argv.size(); ++i) {
    const std::string& a = argv[i];
    if (a.size() < 3 || a.compare(0, 2, "--") != 0) {
      args.positional_.push_back(a);
      continue;
    }
    std::string name = a.substr(2);
    std::optional<std::string> value;
    if (size_t eq = name.find('='); eq != std::string::npos) {
      value = name.substr(eq + 1);
      name = name.substr(0, eq);
    }
    if (Contains(spec.switches, name)) {
      if (value) return Status::InvalidArgument("option --" + name + " takes no value");
      args.values_[name].push_back("true");
    } else if (Contains(spec.valued, name)) {
      if (!value) {
        if (i + 1 >= argv.size())
          return Status::InvalidArgument("option --" + name + " needs a value");
        value = argv[++i];
      }
      args.values_[name].push_back(*value);
    } else {
      return Status::InvalidArgument("unknown option --" + name + " (accepted: " + Accepted(spec) +
                                     ")");
    }
  }
  return args;
}

std::optional<std::string> Args::Get(const std::string& name) const {
  auto it = values_.find(name);
  if (it == values_.end() || it->second.empty()) return std::nullopt;
  return it->second.back();
}

std::string Args::GetOr(const std::string& name, const std::string& fallback) const {
  return Get(name).value_or(fallback);
}

std::vector<std::string> Args::GetAll(const std::string& name) const {
  auto it = values_.find(name);
  return it == values_.end() ? std::vector<std::string>{} : it->second;
}

Result<std::optional<int64_t>> Args::GetInt(const std::string& name) const {
  auto v = Get(name);
  if (!v) return std::optional<int64_t>();
  int64_t out = 0;
  auto [end, ec] = std::from_chars(v->data(), v->data() + v->size(), out);
  if (ec != std::errc() || end != v->data() + v->size() || out < 0) {
    return Status::InvalidArgument("option --" + name + " wants a non-negative integer, got '" +
                                   *v + "'");
  }
  return std::optional<int64_t>(out);
}

}  // namespace floe::cli
