#include "floe/connectors/roster/roster_generator.h"

#include <array>
#include <cstdio>

namespace floe::connectors {
namespace {

constexpr std::array<const char*, 12> kFirstNames = {"Ada",      "Grace",  "Alan",    "Edsger",
                                                     "Barbara",  "Donald", "Frances", "John",
                                                     "Margaret", "Ken",    "Radia",   "Tony"};
constexpr std::array<const char*, 10> kLastNames = {"Lovelace", "Hopper", "Turing", "Dijkstra",
                                                    "Liskov",   "Knuth",  "Allen",  "Backus",
                                                    "Hamilton", "Perlman"};
constexpr std::array<const char*, 8> kSpecialties = {"Cardiology", "Dermatology", "Family Medicine",
                                                     "Neurology",  "Oncology",    "Pediatrics",
                                                     "Psychiatry", "Radiology"};
constexpr std::array<const char*, 8> kStates = {"CA", "NY", "TX", "WA", "IL", "MA", "CO", "GA"};
constexpr std::array<const char*, 8> kCities = {"Springfield", "Riverside", "Franklin",
                                                "Greenville",  "Bristol",   "Clinton",
                                                "Fairview",    "Salem"};
// 2024-01-01T00:00:00Z in microseconds; events are spread one second apart with jitter.
constexpr int64_t kEpochStartMicros = 1704067200LL * 1000000;

}  // namespace

RosterGenerator::RosterGenerator(RosterOptions options)
    : options_(options),
      rng_(options.seed),
      revisions_(static_cast<size_t>(options.providers), 0) {}

std::shared_ptr<const BatchSchema> RosterGenerator::Schema() {
  static const auto schema = [] {
    auto s = std::make_shared<BatchSchema>();
    s->fields = {{"seq", DataType::Int64(), false, 1},
                 {"npi", DataType::String(), false, 2},
                 {"source", DataType::String(), false, 3},
                 {"revision", DataType::Int32(), false, 4},
                 {"event_time", DataType::Timestamp(), false, 5},
                 {"first_name", DataType::String(), true, 6},
                 {"last_name", DataType::String(), true, 7},
                 {"specialty", DataType::String(), true, 8},
                 {"state", DataType::String(), true, 9},
                 {"city", DataType::String(), true, 10},
                 {"zip", DataType::String(), true, 11},
                 {"phone", DataType::String(), true, 12},
                 {"active", DataType::Boolean(), true, 13}};
    return std::shared_ptr<const BatchSchema>(std::move(s));
  }();
  return schema;
}

const char* RosterGenerator::FlinkColumns() {
  return "seq BIGINT NOT NULL, npi STRING NOT NULL, source STRING NOT NULL, revision INT NOT "
         "NULL, event_time TIMESTAMP(3) NOT NULL, first_name STRING, last_name STRING, "
         "specialty STRING, state STRING, city STRING, zip STRING, phone STRING, active BOOLEAN";
}

void RosterGenerator::SkipTo(int64_t seq) {
  for (; next_seq_ < seq && !done(); ++next_seq_) {
    // Same draws, same order as Next; only the revision counter carries state.
    uint64_t r_provider = rng_();
    for (int i = 0; i < 4; ++i) rng_();
    ++revisions_[static_cast<size_t>(r_provider % static_cast<uint64_t>(options_.providers))];
  }
}

RecordBatch RosterGenerator::Next(size_t max_rows) {
  RecordBatch batch(Schema());
  auto col = [&](int i) -> Column& { return batch.mutable_column(static_cast<size_t>(i)); };
  char buf[32];
  for (size_t n = 0; n < max_rows && !done(); ++n, ++next_seq_) {
    // Draw every random number of the event up front, in a fixed order: prefix stability.
    uint64_t r_provider = rng_();
    uint64_t r_source = rng_();
    uint64_t r_jitter = rng_();
    uint64_t r_attr = rng_();
    uint64_t r_null = rng_();
    size_t p = static_cast<size_t>(r_provider % static_cast<uint64_t>(options_.providers));
    int32_t revision = ++revisions_[p];
    // The provider's stable identity, and attributes that change with each correction.
    uint64_t id = 1000000000ULL + (p * 7919ULL + options_.seed * 104729ULL) % 9000000000ULL;
    std::snprintf(buf, sizeof(buf), "%010llu", static_cast<unsigned long long>(id));
    col(0).Append<int64_t>(next_seq_);
    col(1).AppendBytes(buf);
    std::snprintf(buf, sizeof(buf), "source-%llu",
                  static_cast<unsigned long long>(r_source % options_.sources + 1));
    col(2).AppendBytes(buf);
    col(3).Append<int32_t>(revision);
    // Out of event-time order: up to 10 minutes of jitter either way, in whole milliseconds.
    int64_t jitter_ms = static_cast<int64_t>(r_jitter % 1200000) - 600000;
    col(4).Append<int64_t>(kEpochStartMicros + next_seq_ * 1000000 + jitter_ms * 1000);
    col(5).AppendBytes(kFirstNames[(p + r_attr) % kFirstNames.size()]);
    col(6).AppendBytes(kLastNames[p % kLastNames.size()]);
    col(7).AppendBytes(kSpecialties[(r_attr >> 8) % kSpecialties.size()]);
    col(8).AppendBytes(kStates[(p + (r_attr >> 16)) % kStates.size()]);
    if (r_null % 50 == 0) {
      col(9).AppendNull();  // a few incomplete assertions
    } else {
      col(9).AppendBytes(kCities[(r_attr >> 24) % kCities.size()]);
    }
    std::snprintf(buf, sizeof(buf), "%05llu", static_cast<unsigned long long>((id >> 3) % 100000));
    col(10).AppendBytes(buf);
    std::snprintf(buf, sizeof(buf), "555-%04llu",
                  static_cast<unsigned long long>((r_attr >> 32) % 10000));
    col(11).AppendBytes(buf);
    col(12).Append<uint8_t>(static_cast<uint8_t>((r_attr >> 40) % 10 != 0));
  }
  return batch;
}

}  // namespace floe::connectors
