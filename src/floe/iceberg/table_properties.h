#pragma once

#include <string>
#include <string_view>
#include <vector>

// The table property keys Apache Iceberg defines (Java `org.apache.iceberg.TableProperties`
// and the table of `docs/docs/configuration.md`, Iceberg 1.x) in the namespaces engines pass
// from table options to table properties: `write.`, `commit.`, `read.`, `history.`. floe reads
// only a few of them itself (data_writer.h, snapshot_update.h, catalog.h); the others are kept
// for engines that do. Used to refuse misspelled keys, which Iceberg would store and ignore.
namespace floe::iceberg {

// Whether `key` starts with one of the namespaces above.
bool InTablePropertyNamespace(std::string_view key);

// Whether Iceberg defines `key`: one of its keys, or a per-column key such as
// `write.metadata.metrics.column.<col>` or `write.parquet.bloom-filter-enabled.column.<col>`
// with a non-empty column name.
bool IsKnownTableProperty(std::string_view key);

// The keys to suggest a misspelled `key` from: every key, and every per-column pattern
// completed with the column `key` names (the text after its last "column."), else "<col>".
std::vector<std::string> TablePropertySuggestions(std::string_view key);

}  // namespace floe::iceberg
