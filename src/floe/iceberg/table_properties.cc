#include "floe/iceberg/table_properties.h"

#include <array>

namespace floe::iceberg {

namespace {

constexpr std::array<std::string_view, 4> kNamespaces = {"write.", "commit.", "read.", "history."};

// Keys from TableProperties.java and configuration.md; deprecated ones that Iceberg still
// reads are kept.
constexpr std::string_view kKeys[] = {
    // commit.*
    "commit.retry.num-retries",
    "commit.retry.min-wait-ms",
    "commit.retry.max-wait-ms",
    "commit.retry.total-timeout-ms",
    "commit.status-check.num-retries",
    "commit.status-check.min-wait-ms",
    "commit.status-check.max-wait-ms",
    "commit.status-check.total-timeout-ms",
    "commit.manifest.target-size-bytes",
    "commit.manifest.min-count-to-merge",
    "commit.manifest-merge.enabled",
    // write.* : formats and file sizes
    "write.format.default",
    "write.delete.format.default",
    "write.target-file-size-bytes",
    "write.delete.target-file-size-bytes",
    "write.parquet.row-group-size-bytes",
    "write.delete.parquet.row-group-size-bytes",
    "write.parquet.page-size-bytes",
    "write.delete.parquet.page-size-bytes",
    "write.parquet.page-row-limit",
    "write.delete.parquet.page-row-limit",
    "write.parquet.dict-size-bytes",
    "write.delete.parquet.dict-size-bytes",
    "write.parquet.compression-codec",
    "write.delete.parquet.compression-codec",
    "write.parquet.compression-level",
    "write.delete.parquet.compression-level",
    "write.parquet.row-group-check-min-record-count",
    "write.delete.parquet.row-group-check-min-record-count",
    "write.parquet.row-group-check-max-record-count",
    "write.delete.parquet.row-group-check-max-record-count",
    "write.parquet.bloom-filter-max-bytes",
    "write.avro.compression-codec",
    "write.delete.avro.compression-codec",
    "write.avro.compression-level",
    "write.delete.avro.compression-level",
    "write.orc.stripe-size-bytes",
    "write.delete.orc.stripe-size-bytes",
    "write.orc.block-size-bytes",
    "write.delete.orc.block-size-bytes",
    "write.orc.vectorized.batch-size",
    "write.delete.orc.vectorized.batch-size",
    "write.orc.compression-codec",
    "write.delete.orc.compression-codec",
    "write.orc.compression-strategy",
    "write.delete.orc.compression-strategy",
    "write.orc.bloom.filter.columns",
    "write.orc.bloom.filter.fpp",
    // write.* : locations and metadata
    "write.location-provider.impl",
    "write.object-storage.enabled",
    "write.object-storage.partitioned-paths",
    "write.object-storage.path",
    "write.folder-storage.path",
    "write.data.path",
    "write.metadata.path",
    "write.metadata.compression-codec",
    "write.metadata.previous-versions-max",
    "write.metadata.delete-after-commit.enabled",
    "write.metadata.metrics.max-inferred-column-defaults",
    "write.metadata.metrics.default",
    "write.manifest-lists.enabled",
    "write.summary.partition-limit",
    "write.wap.enabled",
    // write.* : engines' write behaviour
    "write.upsert.enabled",
    "write.distribution-mode",
    "write.delete.distribution-mode",
    "write.update.distribution-mode",
    "write.merge.distribution-mode",
    "write.delete.mode",
    "write.delete.isolation-level",
    "write.update.mode",
    "write.update.isolation-level",
    "write.merge.mode",
    "write.merge.isolation-level",
    "write.merge.cardinality-check.enabled",
    "write.delete.granularity",
    "write.spark.fanout.enabled",
    "write.spark.accept-any-schema",
    "write.spark.advisory-partition-size-bytes",
    // read.*
    "read.split.target-size",
    "read.split.metadata-target-size",
    "read.split.planning-lookback",
    "read.split.open-file-cost",
    "read.split.adaptive-size.enabled",
    "read.parquet.vectorization.enabled",
    "read.parquet.vectorization.batch-size",
    "read.orc.vectorization.enabled",
    "read.orc.vectorization.batch-size",
    "read.data-planning-mode",
    "read.delete-planning-mode",
    // history.*
    "history.expire.max-snapshot-age-ms",
    "history.expire.min-snapshots-to-keep",
    "history.expire.max-ref-age-ms",
};

// Per-column keys: the prefix followed by a column name.
constexpr std::string_view kColumnPrefixes[] = {
    "write.metadata.metrics.column.",         "write.parquet.bloom-filter-enabled.column.",
    "write.parquet.bloom-filter-fpp.column.", "write.parquet.bloom-filter-ndv.column.",
    "write.parquet.stats-enabled.column.",
};

}  // namespace

bool InTablePropertyNamespace(std::string_view key) {
  for (std::string_view ns : kNamespaces) {
    if (key.starts_with(ns)) return true;
  }
  return false;
}

bool IsKnownTableProperty(std::string_view key) {
  for (std::string_view k : kKeys) {
    if (key == k) return true;
  }
  for (std::string_view prefix : kColumnPrefixes) {
    if (key.size() > prefix.size() && key.starts_with(prefix)) return true;
  }
  return false;
}

std::vector<std::string> TablePropertySuggestions(std::string_view key) {
  std::vector<std::string> out(std::begin(kKeys), std::end(kKeys));
  size_t at = key.rfind("column.");
  std::string column = at == std::string_view::npos || at + 7 == key.size()
                           ? "<col>"
                           : std::string(key.substr(at + 7));
  for (std::string_view prefix : kColumnPrefixes) out.push_back(std::string(prefix) + column);
  return out;
}

}  // namespace floe::iceberg
