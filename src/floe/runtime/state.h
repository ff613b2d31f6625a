#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "floe/common/byte_codec.h"
#include "floe/common/status.h"

namespace floe::runtime {

// The opaque snapshot blob of one subtask for one checkpoint is a byte-codec blob
// (common/byte_codec.h) in an order only the operator knows, its format version first. Keyed
// state backends (hashmap, rocksdb) will snapshot into a PutBytes section of this blob (or a file
// referenced from it). Owned by the task that snapshots.
using StateWriter = ByteWriter;
using StateReader = ByteReader;

// CRC-32 (IEEE 802.3, the zlib polynomial) of `data`, continuing from `crc` (0 to start).
uint32_t Crc32(std::string_view data, uint32_t crc = 0);

// A file of an incremental checkpoint that later checkpoints may list too (Flink's shared
// state, e.g. a RocksDB SST file). It lives in the checkpoint directory's `shared/` and is
// deleted once no retained checkpoint lists it. `name` is unique for the job (the backend
// makes it so) and is a plain file name.
struct SharedStateFile {
  std::string name;
  uint64_t size = 0;
  uint32_t crc32 = 0;
  bool operator==(const SharedStateFile&) const = default;
};

// Where incremental snapshots keep their shared files (the runtime implements it over the
// checkpoint storage). Thread-safe: asynchronous snapshot parts of several subtasks use it at
// once.
class SharedStateStore {
 public:
  virtual ~SharedStateStore() = default;
  // Copies the local file to `shared/<name>` durably; an existing one of the same name is
  // AlreadyExists.
  virtual Result<SharedStateFile> Upload(const std::string& local_path,
                                         const std::string& name) = 0;
  // Copies `shared/<file.name>` to a local path, checking its size and CRC. A missing file is
  // NotFound naming it (the caller adds which checkpoint needed it).
  virtual Status Download(const SharedStateFile& file, const std::string& local_path) const = 0;
};

}  // namespace floe::runtime
