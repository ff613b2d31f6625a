#include "floe/common/flat_string_map.h"

#include <gtest/gtest.h>

#include <map>
#include <random>
#include <string>

namespace floe {
namespace {

// Against std::map over many keys, growth, erasure and clearing: every key found with its
// value, every absent key not found, entries in insertion order.
TEST(FlatStringMap, FindsWhatStdMapFindsThroughGrowthErasureAndClear) {
  FlatStringMap<int> flat;
  std::map<std::string, int> model;
  std::vector<std::string> order;
  std::mt19937 rng(7);
  for (int i = 0; i < 5000; ++i) {
    std::string key = "k" + std::to_string(rng() % 3000);
    if (i % 7 == 0) key.push_back('\0');  // bytes, not C strings
    const uint64_t hash = FlatStringMap<int>::HashOf(key);
    flat.PrefetchSlot(hash);  // hints only: no effect on what is found
    flat.PrefetchEntry(hash);
    int* found = flat.Find(key);
    ASSERT_EQ(flat.Find(key, hash), found) << key;
    auto it = model.find(key);
    ASSERT_EQ(found != nullptr, it != model.end()) << key;
    if (found != nullptr) {
      EXPECT_EQ(*found, it->second);
      ++*found;
      ++it->second;
    } else {
      flat.Insert(key) = i;
      model[key] = i;
      order.push_back(key);
    }
  }
  ASSERT_EQ(flat.size(), model.size());
  size_t k = 0;
  for (const auto& [key, value] : flat) EXPECT_EQ(key, order[k++]);

  flat.EraseIf([](const auto& entry) { return entry.second % 2 == 0; });
  std::erase_if(model, [](const auto& entry) { return entry.second % 2 == 0; });
  ASSERT_EQ(flat.size(), model.size());
  for (const std::string& key : order) {
    int* found = flat.Find(key);
    ASSERT_EQ(found != nullptr, model.count(key) == 1) << key;
    if (found != nullptr) {
      EXPECT_EQ(*found, model[key]);
    }
  }

  flat.Clear();
  EXPECT_TRUE(flat.empty());
  EXPECT_EQ(flat.Find(order.front()), nullptr);
  flat.Insert("again") = 1;
  ASSERT_NE(flat.Find("again"), nullptr);
  EXPECT_EQ(*flat.Find("again"), 1);
  FlatStringMap<int> empty;
  empty.PrefetchSlot(1);
  empty.PrefetchEntry(1);
  empty.EraseIf([](const auto&) { return true; });
  EXPECT_EQ(empty.Find(""), nullptr);
}

// Erase keeps every other key findable whatever the probe runs look like (a tiny table, so
// runs wrap around), against std::map through random inserts and erasures.
TEST(FlatStringMap, EraseKeepsEveryOtherKeyFindable) {
  FlatStringMap<int> flat;
  std::map<std::string, int> model;
  std::mt19937 rng(3);
  for (int i = 0; i < 20000; ++i) {
    const std::string key = "k" + std::to_string(rng() % (i < 10000 ? 12 : 400));
    if (rng() % 3 == 0) {
      EXPECT_EQ(flat.Erase(key), model.erase(key) == 1) << key;
    } else if (int* found = flat.Find(key); found != nullptr) {
      *found = i;
      model[key] = i;
    } else {
      flat.Insert(key) = i;
      model[key] = i;
    }
    ASSERT_EQ(flat.size(), model.size());
    if (i % 97 != 0) continue;
    for (const auto& [k, v] : model) {
      const int* found = flat.Find(k);
      ASSERT_NE(found, nullptr) << k << " after " << i;
      EXPECT_EQ(*found, v);
    }
    size_t entries = 0;
    for (const auto& [k, v] : flat) entries += model.count(k);
    EXPECT_EQ(entries, model.size());
  }
  EXPECT_FALSE(flat.Erase("absent"));
}

}  // namespace
}  // namespace floe
