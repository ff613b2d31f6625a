#pragma once

// Byte-string keys for hashing rows by some of their columns (upsert dedup, equality deletes,
// partition grouping). Internal to floe_iceberg.

#include <cstdint>
#include <cstring>
#include <string>
#include <type_traits>
#include <variant>

#include "floe/common/record_batch.h"
#include "floe/iceberg/partition_spec.h"
#include "floe/iceberg/schema.h"

namespace floe::iceberg::internal {

// Appends an encoding of row `row` of `column` to `key` such that two values are encoded alike
// exactly when Iceberg equality says they are equal, null included (null equals null). int and
// float are widened to long and double so a column promoted by schema evolution (int -> long,
// float -> double) still matches its older files.
inline void AppendColumnKey(const Column& column, size_t row, std::string* key) {
  if (column.IsNull(row)) {
    key->push_back('\0');
    return;
  }
  key->push_back('\1');
  switch (column.type().id) {
    case TypeId::kInt32: {
      int64_t v = column.Get<int32_t>(row);
      key->append(reinterpret_cast<const char*>(&v), sizeof(v));
      return;
    }
    case TypeId::kFloat: {
      double v = column.Get<float>(row);
      key->append(reinterpret_cast<const char*>(&v), sizeof(v));
      return;
    }
    case TypeId::kString:
    case TypeId::kBinary: {
      std::string_view bytes = column.GetBytes(row);
      uint32_t n = static_cast<uint32_t>(bytes.size());
      key->append(reinterpret_cast<const char*>(&n), sizeof(n));
      key->append(bytes);
      return;
    }
    default: {
      size_t w = static_cast<size_t>(column.type().fixed_width());
      key->append(reinterpret_cast<const char*>(column.values<uint8_t>()) + row * w, w);
      return;
    }
  }
}

// Appends an unambiguous encoding of a Value (used for partition tuples).
inline void AppendValueKey(const Value& value, std::string* key) {
  key->push_back(static_cast<char>(value.index()));
  std::visit(
      [key](const auto& v) {
        using T = std::decay_t<decltype(v)>;
        if constexpr (std::is_same_v<T, std::monostate>) {
        } else if constexpr (std::is_same_v<T, std::string>) {
          uint32_t n = static_cast<uint32_t>(v.size());
          key->append(reinterpret_cast<const char*>(&n), sizeof(n));
          key->append(v);
        } else {
          key->append(reinterpret_cast<const char*>(&v), sizeof(v));
        }
      },
      value);
}

inline std::string PartitionKey(int32_t spec_id, const PartitionTuple& partition) {
  std::string key(reinterpret_cast<const char*>(&spec_id), sizeof(spec_id));
  for (const Value& v : partition) AppendValueKey(v, &key);
  return key;
}

}  // namespace floe::iceberg::internal
