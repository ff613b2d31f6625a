#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "floe/common/status.h"

namespace floe::cli {

// Command-line arguments of one command: positionals and `--name value` / `--name=value`
// options. Options not declared are an error that lists the accepted ones.
class Args {
 public:
  struct Spec {
    std::vector<std::string> valued;    // options that take a value (may repeat)
    std::vector<std::string> switches;  // options without a value
  };

  static Result<Args> Parse(const std::vector<std::string>& argv, const Spec& spec);

  const std::vector<std::string>& positional() const { return positional_; }
  std::optional<std::string> Get(const std::string& name) const;
  std::string GetOr(const std::string& name, const std::string& fallback) const;
  std::vector<std::string> GetAll(const std::string& name) const;
  bool Has(const std::string& name) const { return values_.count(name) != 0; }
  // The option's value as a non-negative integer; errors name the option.
  Result<std::optional<int64_t>> GetInt(const std::string& name) const;

 private:
  std::vector<std::string> positional_;
  std::map<std::string, std::vector<std::string>> values_;
};

}  // namespace floe::cli
