#include "floe/cli/catalog_args.h"

#include <cstdlib>
#include <cstring>
#include <map>

#include "floe/catalog/catalog_config.h"

namespace floe::cli {

namespace {

Result<catalog::CatalogConfig> ConfigFromArgs(const Args& args) {
  std::map<std::string, std::string> options;
  std::optional<std::string> uri = args.Get(kCatalogFlags);
  if (uri && (uri->rfind("http://", 0) == 0 || uri->rfind("https://", 0) == 0)) {
    options = {{"catalog-type", "rest"}, {"uri", *uri}};
    if (auto wh = args.Get("warehouse")) options["warehouse"] = *wh;
    // Secrets come from the environment: a command line is visible to every local user.
    if (const char* c = std::getenv("FLOE_CATALOG_CREDENTIAL")) options["credential"] = c;
    if (const char* t = std::getenv("FLOE_CATALOG_TOKEN")) options["token"] = t;
  } else {
    options = {{"warehouse", args.GetOr("warehouse", "warehouse")}};
    if (uri) {
      options["catalog-type"] = "jdbc";
      options["uri"] = *uri;
      if (auto user = args.Get(kJdbcUserFlag)) options["jdbc.user"] = *user;
    } else if (args.Has(kCatalogNameFlag) || args.Has(kJdbcUserFlag)) {
      return Status::InvalidArgument("--catalog-name and --jdbc-user need --catalog URI");
    }
  }
  if (auto name = args.Get(kCatalogNameFlag)) options["catalog-name"] = *name;
  Result<catalog::CatalogConfig> config = catalog::ParseCatalogOptions(options);
  if (config.ok()) return config;
  // The options' names as the command line spells them.
  std::string msg = config.status().message();
  for (auto [from, to] :
       {std::pair{"option 'uri'", "--catalog"}, std::pair{"option 'warehouse'", "--warehouse"},
        std::pair{"option 'catalog-name'", "--catalog-name"},
        std::pair{"option 'jdbc.user'", "--jdbc-user"}}) {
    if (size_t at = msg.find(from); at != std::string::npos) msg.replace(at, strlen(from), to);
  }
  return Status::InvalidArgument(msg);
}

}  // namespace

Result<std::unique_ptr<iceberg::Catalog>> OpenCatalogFromArgs(const Args& args) {
  FLOE_ASSIGN_OR_RAISE(catalog::CatalogConfig config, ConfigFromArgs(args));
  return catalog::OpenCatalog(config);
}

std::string DescribeCatalogArgs(const Args& args) {
  Result<catalog::CatalogConfig> config = ConfigFromArgs(args);
  return config.ok() ? config->Describe() : std::string("an invalid catalog");
}

}  // namespace floe::cli
