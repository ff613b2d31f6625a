#include "floe/sql/exec/string_functions.h"

#include <algorithm>
#include <map>
#include <regex>

#include "floe/common/utf8.h"

namespace floe::sql::strings {
namespace {

bool IsContinuation(unsigned char c) { return (c & 0xC0) == 0x80; }

// The code point starting at s[i] and its length in bytes; a malformed byte stands for itself.
char32_t Decode(std::string_view s, size_t i, size_t* len) {
  const unsigned char c = static_cast<unsigned char>(s[i]);
  size_t n = c < 0x80 ? 1 : (c >> 5) == 0x6 ? 2 : (c >> 4) == 0xE ? 3 : (c >> 3) == 0x1E ? 4 : 1;
  if (i + n > s.size()) n = 1;
  for (size_t k = 1; k < n; ++k) {
    if (!IsContinuation(static_cast<unsigned char>(s[i + k]))) n = 1;
  }
  *len = n;
  if (n == 1) return c;
  char32_t cp = c & (0x7F >> n);
  for (size_t k = 1; k < n; ++k) cp = (cp << 6) | (static_cast<unsigned char>(s[i + k]) & 0x3F);
  return cp;
}

// The upper-case partner of a lower-case letter (0 when it has none in the mapped ranges).
char32_t ToUpper(char32_t c) {
  if (c >= 'a' && c <= 'z') return c - 32;
  if ((c >= 0xE0 && c <= 0xFE && c != 0xF7) || (c >= 0x3B1 && c <= 0x3C9 && c != 0x3C2) ||
      (c >= 0x430 && c <= 0x44F)) {
    return c - 32;
  }
  if (c >= 0x450 && c <= 0x45F) return c - 80;
  if (c == 0xFF) return 0x178;
  if (c == 0xB5) return 0x39C;   // micro sign -> Greek capital mu, as Java
  if (c == 0x3C2) return 0x3A3;  // final sigma
  if (c == 0x3AC) return 0x386;
  if (c >= 0x3AD && c <= 0x3AF) return c - 37;
  if (c == 0x3CC) return 0x38C;
  if (c == 0x3CD || c == 0x3CE) return c - 63;
  return 0;
}

char32_t ToLower(char32_t c) {
  if (c >= 'A' && c <= 'Z') return c + 32;
  if ((c >= 0xC0 && c <= 0xDE && c != 0xD7) || (c >= 0x391 && c <= 0x3A9 && c != 0x3A2) ||
      (c >= 0x410 && c <= 0x42F)) {
    return c + 32;
  }
  if (c >= 0x400 && c <= 0x40F) return c + 80;
  if (c == 0x178) return 0xFF;
  if (c == 0x386) return 0x3AC;
  if (c >= 0x388 && c <= 0x38A) return c + 37;
  if (c == 0x38C) return 0x3CC;
  if (c == 0x38E || c == 0x38F) return c + 63;
  return 0;
}

// Byte offset of the code point after `count` code points from the start (s.size() past it).
size_t OffsetOf(std::string_view s, int64_t count) {
  size_t i = 0;
  for (int64_t k = 0; k < count && i < s.size(); ++k) {
    size_t len = 1;
    Decode(s, i, &len);
    i += len;
  }
  return i;
}

bool Contains(std::string_view chars, std::string_view cp) {
  return chars.find(cp) != std::string_view::npos;
}

}  // namespace

void MapCase(std::string_view s, bool upper, std::string* out) {
  out->clear();
  out->reserve(s.size());
  for (size_t i = 0; i < s.size();) {
    size_t len = 1;
    const char32_t c = Decode(s, i, &len);
    if (upper && c == 0xDF) {  // sharp s upper-cases to "SS", as Java
      out->append("SS");
    } else if (const char32_t m = upper ? ToUpper(c) : ToLower(c); m != 0 && len > 0) {
      AppendUtf8(static_cast<uint32_t>(m), out);
    } else {
      out->append(s.substr(i, len));
    }
    i += len;
  }
}

size_t CodePoints(std::string_view s) {
  size_t n = 0;
  for (size_t i = 0; i < s.size();) {
    size_t len = 1;
    Decode(s, i, &len);
    i += len;
    ++n;
  }
  return n;
}

std::string_view Trim(std::string_view s, std::string_view chars, bool leading, bool trailing) {
  size_t begin = 0, end = s.size();
  if (leading) {
    while (begin < end) {
      size_t len = 1;
      Decode(s, begin, &len);
      if (!Contains(chars, s.substr(begin, len))) break;
      begin += len;
    }
  }
  if (trailing) {
    while (end > begin) {
      size_t start = end - 1;
      while (start > begin && IsContinuation(static_cast<unsigned char>(s[start]))) --start;
      if (!Contains(chars, s.substr(start, end - start))) break;
      end = start;
    }
  }
  return s.substr(begin, end - begin);
}

std::optional<std::string_view> Substring(std::string_view s, int64_t start,
                                          std::optional<int64_t> length) {
  if (length && *length < 0) return std::nullopt;
  const int64_t n = static_cast<int64_t>(CodePoints(s));
  // 1-based; 0 is 1; a negative start counts from the end, and one before the start is empty.
  const int64_t first = start > 0 ? start - 1 : start < 0 ? n + start : 0;
  if (first < 0 || first >= n) return std::string_view();
  const int64_t last = length ? std::min(first + *length, n) : n;
  if (last <= first) return std::string_view();
  const size_t b = OffsetOf(s, first);
  const size_t e = b + OffsetOf(s.substr(b), last - first);
  return s.substr(b, e - b);
}

bool Like(std::string_view s, std::string_view pattern) {
  // Greedy matching with one backtrack point for the last '%' (linear for most patterns).
  size_t si = 0, pi = 0;
  size_t star_p = std::string_view::npos, star_s = 0;
  while (si < s.size()) {
    size_t plen = 1, slen = 1;
    if (pi < pattern.size()) Decode(pattern, pi, &plen);
    Decode(s, si, &slen);
    if (pi < pattern.size() && pattern[pi] == '%') {
      star_p = ++pi;
      star_s = si;
      continue;
    }
    if (pi < pattern.size() && pattern[pi] == '_') {
      pi += 1;
      si += slen;
      continue;
    }
    if (pi < pattern.size() && pattern.substr(pi, plen) == s.substr(si, slen)) {
      pi += plen;
      si += slen;
      continue;
    }
    if (star_p == std::string_view::npos) return false;
    pi = star_p;  // let the last '%' take one more character
    size_t len = 1;
    Decode(s, star_s, &len);
    star_s += len;
    si = star_s;
  }
  while (pi < pattern.size() && pattern[pi] == '%') ++pi;
  return pi == pattern.size();
}

std::string_view Left(std::string_view s, int64_t count) {
  if (count <= 0) return {};
  return s.substr(0, OffsetOf(s, count));
}

std::string_view Right(std::string_view s, int64_t count) {
  const int64_t n = static_cast<int64_t>(CodePoints(s));
  if (count <= 0) return {};
  if (count >= n) return s;
  return s.substr(OffsetOf(s, n - count));
}

int64_t Position(std::string_view search, std::string_view s, int64_t from) {
  if (search.empty()) return 1;
  const size_t start = OffsetOf(s, std::max<int64_t>(from, 1) - 1);
  const size_t at = s.find(search, start);
  if (at == std::string_view::npos) return 0;
  return static_cast<int64_t>(CodePoints(s.substr(0, at))) + 1;
}

void Replace(std::string_view s, std::string_view search, std::string_view replacement,
             std::string* out) {
  out->clear();
  if (search.empty()) {  // Java's String.replace: the replacement around every character
    out->append(replacement);
    for (size_t i = 0; i < s.size();) {
      size_t len = 1;
      Decode(s, i, &len);
      out->append(s.substr(i, len));
      out->append(replacement);
      i += len;
    }
    return;
  }
  size_t from = 0;
  for (size_t at; (at = s.find(search, from)) != std::string_view::npos;
       from = at + search.size()) {
    out->append(s.substr(from, at - from));
    out->append(replacement);
  }
  out->append(s.substr(from));
}

std::optional<std::string> RegexpExtract(std::string_view s, std::string_view regex,
                                         int64_t group) {
  // The patterns of this thread, compiled (nullopt: invalid); a job has few, bounded anyway.
  thread_local std::map<std::string, std::optional<std::regex>, std::less<>> compiled;
  auto it = compiled.find(regex);
  if (it == compiled.end()) {
    if (compiled.size() >= 256) compiled.clear();
    std::optional<std::regex> re;
    try {
      re.emplace(std::string(regex), std::regex::ECMAScript);
    } catch (const std::regex_error&) {
      re.reset();
    }
    it = compiled.emplace(std::string(regex), std::move(re)).first;
  }
  if (!it->second) return std::nullopt;
  std::match_results<std::string_view::const_iterator> match;
  if (!std::regex_search(s.begin(), s.end(), match, *it->second)) return std::nullopt;
  if (group < 0 || static_cast<size_t>(group) >= match.size() || !match[group].matched) {
    return std::nullopt;
  }
  return match[group].str();
}

}  // namespace floe::sql::strings
