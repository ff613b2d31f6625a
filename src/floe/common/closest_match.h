#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

// Suggestions for misspelled names (options, table properties, Kafka properties).
namespace floe {

// The candidate closest to `key` by edit distance (insertions, deletions, substitutions and
// swaps of neighbours count 1), when it is close enough to be a misspelling: at most
// max(2, key.size() / 4) edits. The first of equally close candidates wins.
std::optional<std::string> ClosestMatch(std::string_view key,
                                        const std::vector<std::string>& candidates);

// " (did you mean 'X'?)" for ClosestMatch's answer, else "": for the end of an error message.
std::string DidYouMean(std::string_view key, const std::vector<std::string>& candidates);

}  // namespace floe
