// `floe catalog serve`: an Iceberg REST catalog in front of floe's JDBC (or filesystem) catalog.
#include <csignal>
#include <cstdio>
#include <cstdlib>

#include "floe/catalog/rest_server.h"
#include "floe/cli/catalog_args.h"
#include "floe/cli/commands.h"

namespace floe::cli {

namespace {

constexpr const char* kUsage =
    "usage: floe catalog serve [--catalog URI --catalog-name NAME --jdbc-user USER] "
    "--warehouse DIR\n"
    "                          [--listen HOST:PORT]   (default 127.0.0.1:8181; port 0: a free "
    "one)\n"
    "  an Iceberg REST catalog over the JDBC (or filesystem) catalog the flags name; clients\n"
    "  need an OAuth2 token for FLOE_CATALOG_CREDENTIAL=client_id:client_secret when it is set\n";

Status Serve(const std::vector<std::string>& argv) {
  FLOE_ASSIGN_OR_RAISE(
      Args args,
      Args::Parse(argv,
                  {{kCatalogFlags, kCatalogNameFlag, kJdbcUserFlag, "warehouse", "listen"}, {}}));
  if (!args.positional().empty()) return Status::InvalidArgument(kUsage);
  std::string catalog_uri = args.GetOr(kCatalogFlags, "");
  if (catalog_uri.rfind("http", 0) == 0) {
    return Status::InvalidArgument(
        "--catalog names the catalog to serve (jdbc:...), not a REST "
        "catalog");
  }
  catalog::RestServerOptions options;
  std::string listen = args.GetOr("listen", "127.0.0.1:8181");
  size_t colon = listen.rfind(':');
  char* end = nullptr;
  long port = colon == std::string::npos ? -1 : std::strtol(listen.c_str() + colon + 1, &end, 10);
  if (colon == std::string::npos || colon == 0 || end == nullptr || *end != '\0' || port < 0 ||
      port > 65535) {
    return Status::InvalidArgument("--listen '" + listen + "' must be HOST:PORT, PORT in 0..65535");
  }
  options.host = listen.substr(0, colon);
  options.port = static_cast<int>(port);
  if (const char* c = std::getenv("FLOE_CATALOG_CREDENTIAL")) options.credential = c;
  FLOE_ASSIGN_OR_RAISE(std::unique_ptr<iceberg::Catalog> backing, OpenCatalogFromArgs(args));
  // SIGINT/SIGTERM are taken by sigwait below, in this thread only: blocked before the server's
  // threads start, so they inherit the mask.
  sigset_t stop;
  sigemptyset(&stop);
  sigaddset(&stop, SIGINT);
  sigaddset(&stop, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &stop, nullptr);
  FLOE_ASSIGN_OR_RAISE(std::unique_ptr<catalog::RestCatalogServer> server,
                       catalog::RestCatalogServer::Start(std::move(backing), options));
  std::printf("floe catalog: serving %s at http://%s:%d%s\n", DescribeCatalogArgs(args).c_str(),
              options.host.c_str(), server->port(),
              options.credential.empty() ? "" : " (OAuth2 client credentials required)");
  std::fflush(stdout);
  int signal = 0;
  sigwait(&stop, &signal);
  std::fprintf(stderr, "floe catalog: stopping (signal %d)\n", signal);
  server->Stop();
  server->Wait();
  return Status::OK();
}

}  // namespace

Status RunCatalogCommand(const std::vector<std::string>& args) {
  if (args.empty() || args[0] == "--help" || args[0] == "help") {
    std::fputs(kUsage, args.empty() ? stderr : stdout);
    return args.empty() ? Status::InvalidArgument("missing catalog command") : Status::OK();
  }
  if (args[0] == "serve") return Serve({args.begin() + 1, args.end()});
  std::fputs(kUsage, stderr);
  return Status::InvalidArgument("unknown catalog command '" + args[0] + "'");
}

}  // namespace floe::cli
