#pragma once

#include <cstdint>
#include <string_view>

#include "floe/common/byte_codec.h"

namespace floe::runtime {

// The opaque snapshot blob of one subtask for one checkpoint is a byte-codec blob
// (common/byte_codec.h) in an order only the operator knows, its format version first. Keyed
// state backends (hashmap, rocksdb) will snapshot into a PutBytes section of this blob (or a file
// referenced from it). Owned by the task that snapshots.
using StateWriter = ByteWriter;
using StateReader = ByteReader;

// CRC-32 (IEEE 802.3, the zlib polynomial) of `data`, continuing from `crc` (0 to start).
uint32_t Crc32(std::string_view data, uint32_t crc = 0);

}  // namespace floe::runtime
