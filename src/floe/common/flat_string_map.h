#pragma once

// FlatStringMap: byte-string keys -> values, kept in one vector (in insertion order until an
// Erase moves the last entry into the gap) and found through an open-addressing index of
// (hash, position) slots. For lookups per row on hot paths, where std::unordered_map's node per
// entry costs a cache miss per probe and a key comparison per collision; a slot's stored hash
// rules out almost every other key without touching it.

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace floe {

template <typename V>
class FlatStringMap {
 public:
  using Entry = std::pair<std::string, V>;

  // The value of `key`, or null. Valid until the next Insert, EraseIf or Clear.
  V* Find(std::string_view key) { return Find(key, HashOf(key)); }
  // As Find, with `hash` = HashOf(key) worked out before (to prefetch).
  V* Find(std::string_view key, uint64_t hash) {
    const uint32_t index = IndexOf(key, hash);
    return index == 0 ? nullptr : &entries_[index - 1].second;
  }
  const V* Find(std::string_view key) const {
    const uint32_t index = IndexOf(key, HashOf(key));
    return index == 0 ? nullptr : &entries_[index - 1].second;
  }
  static uint64_t HashOf(std::string_view key) { return std::hash<std::string_view>{}(key); }
  // The position of `key` among the entries (see begin()), or npos. A position stays valid
  // through Inserts; an Erase, EraseIf or Clear may move it.
  static constexpr size_t npos = static_cast<size_t>(-1);
  size_t PositionOf(std::string_view key, uint64_t hash) const {
    const uint32_t index = IndexOf(key, hash);
    return index == 0 ? npos : index - 1;
  }
  V& At(size_t position) { return entries_[position].second; }

  // A lookup per row of a large map waits on two cache misses, its slot and its entry. A caller
  // that knows the keys of rows ahead hides them: PrefetchSlot(hash) some rows ahead, then
  // PrefetchEntry(hash) fewer rows ahead (it reads the slot, loaded by then). The entry followed
  // is the one in the key's home slot: a key that probed further is not prefetched.
  void PrefetchSlot(uint64_t hash) const {
    if (!slots_.empty()) __builtin_prefetch(&slots_[hash & mask_]);
  }
  void PrefetchEntry(uint64_t hash) const {
    if (slots_.empty()) return;
    const Slot& s = slots_[hash & mask_];
    if (s.index != 0) __builtin_prefetch(&entries_[s.index - 1]);
  }

  // Adds `key` with a value-initialized value and returns it. REQUIRES: `key` is absent.
  V& Insert(std::string_view key) {
    if ((entries_.size() + 1) * 2 > slots_.size()) Rehash(slots_.empty() ? 16 : slots_.size() * 2);
    entries_.emplace_back(std::string(key), V{});
    Place(HashOf(key), entries_.size());
    return entries_.back().second;
  }
  // Removes `key`, the last entry taking its place; false when it was absent.
  bool Erase(std::string_view key) {
    if (slots_.empty()) return false;
    const uint64_t hash = HashOf(key);
    size_t i = hash & mask_;
    for (;; i = (i + 1) & mask_) {
      if (slots_[i].index == 0) return false;
      if (slots_[i].hash == hash && entries_[slots_[i].index - 1].first == key) break;
    }
    const size_t at = slots_[i].index - 1;
    // Backward shift: a later slot of the probe run whose home is not in (i, j] fills the gap,
    // so no lookup meets an empty slot before its key.
    for (size_t j = (i + 1) & mask_; slots_[j].index != 0; j = (j + 1) & mask_) {
      const size_t home = slots_[j].hash & mask_;
      if (i <= j ? (i < home && home <= j) : (i < home || home <= j)) continue;
      slots_[i] = slots_[j];
      i = j;
    }
    slots_[i] = Slot{};
    const size_t last = entries_.size() - 1;
    if (at != last) {
      entries_[at] = std::move(entries_[last]);
      size_t k = HashOf(entries_[at].first) & mask_;
      while (slots_[k].index != last + 1) k = (k + 1) & mask_;
      slots_[k].index = static_cast<uint32_t>(at + 1);
    }
    entries_.pop_back();
    return true;
  }
  // Removes the entries for which pred(entry) holds; the others keep their order.
  template <typename P>
  void EraseIf(P pred) {
    std::erase_if(entries_, pred);
    if (!slots_.empty()) Rehash(slots_.size());
  }
  void Clear() {
    entries_.clear();
    slots_.assign(slots_.size(), Slot{});
  }
  size_t size() const { return entries_.size(); }
  bool empty() const { return entries_.empty(); }
  // Entries in insertion order.
  typename std::vector<Entry>::iterator begin() { return entries_.begin(); }
  typename std::vector<Entry>::iterator end() { return entries_.end(); }
  typename std::vector<Entry>::const_iterator begin() const { return entries_.begin(); }
  typename std::vector<Entry>::const_iterator end() const { return entries_.end(); }

 private:
  struct Slot {
    uint64_t hash = 0;
    uint32_t index = 0;  // 0: empty; else the entry's position + 1
  };
  // The slot index of `key` (its position + 1), 0 when absent.
  uint32_t IndexOf(std::string_view key, uint64_t hash) const {
    if (slots_.empty()) return 0;
    for (size_t i = hash & mask_;; i = (i + 1) & mask_) {
      const Slot& s = slots_[i];
      if (s.index == 0 || (s.hash == hash && entries_[s.index - 1].first == key)) return s.index;
    }
  }
  void Place(uint64_t hash, size_t index) {
    size_t i = hash & mask_;
    while (slots_[i].index != 0) i = (i + 1) & mask_;
    slots_[i] = Slot{hash, static_cast<uint32_t>(index)};
  }
  void Rehash(size_t n) {  // n: a power of two, at least twice the entries
    slots_.assign(n, Slot{});
    mask_ = n - 1;
    for (size_t k = 0; k < entries_.size(); ++k) Place(HashOf(entries_[k].first), k + 1);
  }

  std::vector<Slot> slots_;
  size_t mask_ = 0;
  std::vector<Entry> entries_;
};

}  // namespace floe
