#include "floe/common/closest_match.h"

#include <algorithm>

namespace floe {

namespace {

// Optimal string alignment distance: Levenshtein plus swaps of adjacent characters.
size_t EditDistance(std::string_view a, std::string_view b) {
  const size_t n = a.size();
  const size_t m = b.size();
  std::vector<size_t> prev2(m + 1), prev(m + 1), cur(m + 1);
  for (size_t j = 0; j <= m; ++j) prev[j] = j;
  for (size_t i = 1; i <= n; ++i) {
    cur[0] = i;
    for (size_t j = 1; j <= m; ++j) {
      size_t cost = a[i - 1] == b[j - 1] ? 0 : 1;
      cur[j] = std::min({prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + cost});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1]) {
        cur[j] = std::min(cur[j], prev2[j - 2] + 1);
      }
    }
    std::swap(prev2, prev);
    std::swap(prev, cur);
  }
  return prev[m];
}

}  // namespace

std::optional<std::string> ClosestMatch(std::string_view key,
                                        const std::vector<std::string>& candidates) {
  const size_t limit = std::max<size_t>(2, key.size() / 4);
  std::optional<std::string> best;
  size_t best_distance = limit + 1;
  for (const std::string& c : candidates) {
    size_t d = EditDistance(key, c);
    if (d < best_distance) {
      best_distance = d;
      best = c;
    }
  }
  return best;
}

std::string DidYouMean(std::string_view key, const std::vector<std::string>& candidates) {
  std::optional<std::string> near = ClosestMatch(key, candidates);
  return near ? " (did you mean '" + *near + "'?)" : "";
}

}  // namespace floe
