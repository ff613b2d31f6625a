#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "floe/common/status.h"
#include "floe/format/avro/schema.h"
#include "floe/format/avro/value.h"

namespace floe::avro {

// Avro binary encoding of single datums (spec section "Binary Encoding"). The container file
// classes build on these; they are public for tests and for callers that embed Avro datums.

// Appends the zigzag varint encoding of `v` (Avro int and long share it).
void AppendVarint(int64_t v, std::string* out);

// Reads a zigzag varint from the front of *data and advances past it. Corruption when it is
// truncated or longer than 64 bits.
Status ReadVarint(std::string_view* data, int64_t* v);

// Appends the encoding of `value` as a datum of `schema` to *out. Validates the value against the
// schema; on a mismatch returns InvalidArgument naming the path inside the datum (e.g.
// "manifest_file.partitions[2].contains_null: expected boolean, got long") and leaves *out with
// a partial encoding that the caller must discard.
// Union branches: a null value picks the "null" branch; otherwise the first branch whose type
// matches the value's kind. When several named branches (records, enums, fixed) match the kind,
// the first one the value validates against is used.
Status EncodeValue(const Node& schema, const Value& value, std::string* out);

// Decodes one datum of `schema` from the front of *data and advances *data past it. Returns
// Corruption (with a bare description; callers add the file and position) on truncated input,
// bad varints, negative or impossible lengths, out-of-range union / enum indexes, or nesting
// deeper than kMaxDepth. Memory used is bounded by a constant factor of data->size().
Status DecodeValue(const Node& schema, std::string_view* data, Value* out);

// Deepest nesting of arrays / maps / records / unions the decoder follows; bounds stack use on
// recursive schemas fed hostile input.
inline constexpr int kMaxDepth = 512;

}  // namespace floe::avro
