#include "floe/io/location.h"

#include "floe/io/file.h"
#include "floe/io/s3_client.h"

namespace floe::io {

bool HasUriScheme(std::string_view location) {
  // RFC 3986: ALPHA *( ALPHA / DIGIT / "+" / "-" / "." ) ":"
  size_t colon = location.find(':');
  if (colon == std::string_view::npos || colon == 0) return false;
  auto alpha = [](char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); };
  if (!alpha(location[0])) return false;
  for (size_t i = 1; i < colon; ++i) {
    char c = location[i];
    if (!alpha(c) && !(c >= '0' && c <= '9') && c != '+' && c != '-' && c != '.') return false;
  }
  return true;
}

Result<std::string> ResolveLocation(std::string_view location, std::string_view what) {
  auto refuse = [&](std::string_view why) {
    return Status::InvalidArgument(std::string(what) + " = '" + std::string(location) +
                                   "': " + std::string(why));
  };
  if (location.empty()) return refuse("empty");
  if (IsS3Uri(location)) {
    FLOE_RETURN_NOT_OK(ParseS3Uri(location).status().WithContext(what));
    std::string uri(location);
    while (uri.size() > 5 && uri.back() == '/') uri.pop_back();
    return uri;
  }
  if (!HasUriScheme(location)) return AbsolutePath(std::string(location));
  std::string_view scheme = location.substr(0, location.find(':'));
  if (scheme != "file" && scheme != "FILE") {
    return refuse("floe reads and writes local paths, file: URIs and s3:// URIs, not '" +
                  std::string(scheme) + ":'");
  }
  std::string_view rest = location.substr(5);
  if (rest.rfind("//", 0) == 0) {
    // file://AUTHORITY/path: only an empty authority or localhost is this machine.
    size_t slash = rest.find('/', 2);
    std::string_view authority =
        rest.substr(2, slash == std::string_view::npos ? std::string_view::npos : slash - 2);
    if (!authority.empty() && authority != "localhost") {
      return refuse(
          "a file URI names this machine's files: use file:///path (three slashes), not "
          "host '" +
          std::string(authority) + "'");
    }
    if (slash == std::string_view::npos) return refuse("no path after the file URI's host");
    rest = rest.substr(slash);
  }
  if (rest.empty() || rest[0] != '/') {
    return refuse("a file URI holds an absolute path (file:///path or file:/path)");
  }
  // The rest is the path as it is, as Flink's and Hadoop's Path read it (no %XX decoding), so a
  // location floe writes into metadata as file://PATH reads back as PATH.
  return AbsolutePath(std::string(rest));
}

}  // namespace floe::io
