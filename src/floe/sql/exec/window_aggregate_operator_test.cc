#include "floe/sql/exec/window_aggregate_operator.h"

#include <gtest/gtest.h>

#include <map>
#include <random>
#include <set>

#include "floe/common/log.h"
#include "floe/common/time_zone.h"
#include "floe/connectors/connectors_test_util.h"
#include "floe/runtime/keyed_operator_harness.h"
#include "floe/runtime/partitioner.h"
#include "floe/runtime/row_kind.h"
#include "floe/sql/exec/watermark_assigner_operator.h"

namespace floe::sql {
namespace {

using connectors::testing::CollectingCollector;
using connectors::testing::JsonRows;
using runtime::Watermark;

constexpr int64_t kMinute = 60'000'000;  // microseconds
constexpr int64_t kMinuteMs = 60'000;

WindowSpec Window(WindowKind kind, int64_t size_min, int64_t step_min = 0) {
  WindowSpec w;
  w.kind = kind;
  w.size_ms = size_min * kMinuteMs;
  w.step_ms = step_min * kMinuteMs;
  w.time_column = 1;
  return w;
}

AggregateCall Agg(AggregateFunction f, int input, DataType type, bool distinct = false) {
  AggregateCall a;
  a.function = f;
  a.input_column = input;
  a.distinct = distinct;
  a.output_type = type;
  a.nullable = f != AggregateFunction::kCount;
  return a;
}

std::shared_ptr<const BatchSchema> EventSchema() {
  auto s = std::make_shared<BatchSchema>();
  s->fields = {Field{"course", DataType::String(), true, 0},
               Field{"event_time", DataType::Timestamp(), true, 0},
               Field{"score", DataType::Int32(), true, 0}};
  return s;
}

struct Event {
  std::optional<std::string> course;
  std::optional<int64_t> time;
  std::optional<int32_t> score;
};

RecordBatch Events(const std::vector<Event>& events) {
  RecordBatch b(EventSchema());
  for (const Event& e : events) {
    e.course ? b.mutable_column(0).AppendBytes(*e.course) : b.mutable_column(0).AppendNull();
    e.time ? b.mutable_column(1).Append<int64_t>(*e.time) : b.mutable_column(1).AppendNull();
    e.score ? b.mutable_column(2).Append<int32_t>(*e.score) : b.mutable_column(2).AppendNull();
  }
  return b;
}

WindowAggregateSpec TileSpec(WindowSpec window = Window(WindowKind::kTumble, 5)) {
  WindowAggregateSpec spec;
  spec.input = EventSchema();
  spec.key_columns = {0};
  spec.window = window;
  spec.aggregates = {Agg(AggregateFunction::kCount, -1, DataType::Int64())};
  return spec;
}

// The keyed state backend every WindowAggregate test runs on (the test's parameter).
std::string g_backend = "hashmap";

class WindowAggregate : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override { g_backend = GetParam(); }
};

INSTANTIATE_TEST_SUITE_P(Backends, WindowAggregate, ::testing::Values("hashmap", "rocksdb"),
                         [](const auto& info) { return info.param; });

using Harness = runtime::testing::KeyedOperatorHarness<WindowAggregateOperator>;

// The operator on the runtime's keyed state, as the executor runs it: subtask `subtask` of
// `parallelism`.
Harness Open(WindowAggregateSpec spec,
             runtime::MetricGroup* metrics = runtime::MetricGroup::Unreported(),
             uint32_t subtask = 0, uint32_t parallelism = 1) {
  auto options = WindowAggregateOperator::KeyedStateOptionsFor(spec);
  EXPECT_TRUE(options.ok()) << options.status().ToString();
  options->backend = g_backend;
  auto made = WindowAggregateOperator::Make(std::move(spec));
  EXPECT_TRUE(made.ok()) << made.status().ToString();
  runtime::OperatorContext ctx;
  ctx.metrics = metrics;
  ctx.task.vertex = "window";
  ctx.task.subtask = runtime::SubtaskIndex(subtask);
  ctx.task.parallelism = parallelism;
  ctx.task.key_groups = runtime::KeyGroupRangeForSubtask(subtask, 128, parallelism);
  auto h = Harness::Open(std::move(made).value(), ctx, *options);
  EXPECT_TRUE(h.ok()) << h.status().ToString();
  return std::move(h).value();
}

TEST(WindowsOf, TumbleHopAndCumulateFollowFlink) {
  const int64_t m = kMinute;
  using W = std::vector<std::pair<int64_t, int64_t>>;
  EXPECT_EQ(WindowsOf(Window(WindowKind::kTumble, 5), 7 * m), (W{{5 * m, 10 * m}}));
  EXPECT_EQ(WindowsOf(Window(WindowKind::kTumble, 5), 5 * m), (W{{5 * m, 10 * m}}));
  EXPECT_EQ(WindowsOf(Window(WindowKind::kTumble, 5), -1), (W{{-5 * m, 0}}));
  WindowSpec offset = Window(WindowKind::kTumble, 5);
  offset.offset_ms = kMinuteMs;
  EXPECT_EQ(WindowsOf(offset, 7 * m), (W{{6 * m, 11 * m}}));
  // HOP(slide 5 min, size 10 min): two windows hold every row.
  EXPECT_EQ(WindowsOf(Window(WindowKind::kHop, 10, 5), 7 * m), (W{{0, 10 * m}, {5 * m, 15 * m}}));
  // CUMULATE(step 2 min, size 6 min): the windows of [0, 6 min) ending after the row.
  EXPECT_EQ(WindowsOf(Window(WindowKind::kCumulate, 6, 2), 3 * m), (W{{0, 4 * m}, {0, 6 * m}}));
  EXPECT_EQ(WindowsOf(Window(WindowKind::kCumulate, 6, 2), 0),
            (W{{0, 2 * m}, {0, 4 * m}, {0, 6 * m}}));
}

TEST_P(WindowAggregate, TumbleCountFiresWhenTheWatermarkPassesTheWindowEnd) {
  runtime::MetricRegistry registry;
  runtime::MetricGroup metrics(&registry, runtime::TaskLabels("window", 0));
  auto op = Open(TileSpec(), &metrics);
  CollectingCollector out;
  ASSERT_TRUE(op->ProcessBatch(Events({{"db", 1 * kMinute, 1},
                                       {"db", 4 * kMinute, 1},
                                       {"ml", 2 * kMinute, 1},
                                       {"db", 6 * kMinute, 1}}),
                               0, out)
                  .ok());
  EXPECT_TRUE(out.batches.empty());
  // The window [0, 5 min) fires once the watermark reaches its last millisecond.
  ASSERT_TRUE(op->OnWatermark(Watermark(5 * kMinute - 1001), out).ok());
  EXPECT_TRUE(out.batches.empty());
  ASSERT_TRUE(op->OnWatermark(Watermark(5 * kMinute - 1000), out).ok());
  std::vector<std::string> rows = JsonRows(out.batches);
  std::sort(rows.begin(), rows.end());
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_NE(rows[0].find("\"course\":\"db\""), std::string::npos) << rows[0];
  EXPECT_NE(rows[0].find("\"agg0\":2"), std::string::npos) << rows[0];
  EXPECT_NE(rows[1].find("\"course\":\"ml\""), std::string::npos) << rows[1];
  EXPECT_NE(rows[1].find("\"agg0\":1"), std::string::npos) << rows[1];
  EXPECT_NE(rows[0].find("\"window_end\":\"1970-01-01T00:05:00"), std::string::npos) << rows[0];
  // A row for the fired window is late: dropped and counted; the open window keeps counting.
  out.batches.clear();
  ASSERT_TRUE(
      op->ProcessBatch(Events({{"db", 3 * kMinute, 1}, {"db", 7 * kMinute, 1}}), 0, out).ok());
  EXPECT_EQ(op->late_records_dropped(), 1);
  // ...and never silently: Flink's numLateRecordsDropped, and the next checkpoint logs it, once.
  const auto samples = registry.Snapshot();
  ASSERT_EQ(samples.size(), 1u);
  EXPECT_EQ(samples[0].name, "taskmanager_job_task_operator_numLateRecordsDropped");
  EXPECT_EQ(samples[0].value, 1);
  std::string logged;
  SetLogSinkForTesting([&](LogLevel, std::string_view line) { logged += line; });
  ASSERT_TRUE(op.Checkpoint(runtime::CheckpointId(4), out).ok());
  ASSERT_TRUE(op.Checkpoint(runtime::CheckpointId(5), out).ok());
  SetLogSinkForTesting({});
  EXPECT_NE(logged.find(": 1 late row(s) dropped before checkpoint 4 (1 in all)"),
            std::string::npos)
      << logged;
  EXPECT_EQ(logged.find("checkpoint 5"), std::string::npos) << logged;
  ASSERT_TRUE(op->OnWatermark(Watermark(INT64_MAX), out).ok());
  rows = JsonRows(out.batches);
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_NE(rows[0].find("\"agg0\":2"), std::string::npos) << rows[0];
  EXPECT_EQ(op->open_windows(), 0u);
}

// Windows that fire together go out in bounded batches while their timers fire: 10,000 keys'
// windows closing at one watermark arrive as batches of at most 4,096 rows, every window once.
// Calls ContinueWork until the operator's work is done, as the executor's task loop does.
void FinishWork(WindowAggregateOperator& op, CollectingCollector& out) {
  while (true) {
    Result<bool> more = op.ContinueWork(out);
    ASSERT_TRUE(more.ok()) << more.status().ToString();
    if (!*more) return;
  }
}

TEST_P(WindowAggregate, ManyWindowsFiringAtOnceGoOutInBoundedSlices) {
  auto op = Open(TileSpec());
  CollectingCollector out;
  std::vector<Event> events;
  for (int k = 0; k < 10'000; ++k) events.push_back({"c" + std::to_string(k), kMinute, 1});
  ASSERT_TRUE(op->ProcessBatch(Events(events), 0, out).ok());
  ASSERT_TRUE(op->OnWatermark(Watermark(INT64_MAX), out).ok());
  // One slice, and the watermark waits for the last.
  ASSERT_EQ(out.batches.size(), 1u);
  EXPECT_EQ(out.batches[0].num_rows(), 4096u);
  EXPECT_TRUE(out.watermarks.empty());
  FinishWork(op.op(), out);
  ASSERT_EQ(out.watermarks.size(), 1u);
  EXPECT_EQ(out.watermarks[0], Watermark(INT64_MAX));
  size_t rows = 0;
  for (const RecordBatch& b : out.batches) {
    EXPECT_LE(b.num_rows(), 4096u);
    rows += b.num_rows();
  }
  EXPECT_EQ(rows, 10'000u);
  EXPECT_GE(out.batches.size(), 3u);
  std::vector<std::string> json = JsonRows(out.batches);
  EXPECT_EQ(std::set<std::string>(json.begin(), json.end()).size(), 10'000u);
  EXPECT_EQ(op->open_windows(), 0u);
}

TEST_P(WindowAggregate, AggregatesSkipNullsAndFollowTheirTypes) {
  WindowAggregateSpec spec = TileSpec();
  spec.aggregates = {Agg(AggregateFunction::kCount, 2, DataType::Int64()),
                     Agg(AggregateFunction::kCount, 2, DataType::Int64(), /*distinct=*/true),
                     Agg(AggregateFunction::kSum, 2, DataType::Int32()),
                     Agg(AggregateFunction::kMin, 2, DataType::Int32()),
                     Agg(AggregateFunction::kMax, 2, DataType::Int32()),
                     Agg(AggregateFunction::kAvg, 2, DataType::Int32()),
                     Agg(AggregateFunction::kMin, 0, DataType::String())};
  auto op = Open(spec);
  CollectingCollector out;
  ASSERT_TRUE(
      op->ProcessBatch(Events({{"db", 1, 4}, {"db", 2, 4}, {"db", 3, {}}, {"db", 4, 9}}), 0, out)
          .ok());
  ASSERT_TRUE(op->ProcessBatch(Events({{"x", 1, {}}}), 0, out).ok());
  ASSERT_TRUE(op->OnWatermark(Watermark(INT64_MAX), out).ok());
  std::vector<std::string> rows = JsonRows(out.batches);
  std::sort(rows.begin(), rows.end());
  ASSERT_EQ(rows.size(), 2u);
  // COUNT 3, COUNT DISTINCT 2, SUM 17, MIN 4, MAX 9, AVG 17/3 = 5 (integer AVG truncates).
  for (const char* want : {"\"agg0\":3", "\"agg1\":2", "\"agg2\":17", "\"agg3\":4", "\"agg4\":9",
                           "\"agg5\":5", "\"agg6\":\"db\""}) {
    EXPECT_NE(rows[0].find(want), std::string::npos) << want << " in " << rows[0];
  }
  // Only NULL scores: COUNT 0, SUM / MIN / AVG NULL.
  for (const char* want : {"\"agg0\":0", "\"agg1\":0", "\"agg2\":null", "\"agg5\":null"}) {
    EXPECT_NE(rows[1].find(want), std::string::npos) << want << " in " << rows[1];
  }
}

TEST_P(WindowAggregate, HopCountsARowInEveryWindowHoldingIt) {
  auto op = Open(TileSpec(Window(WindowKind::kHop, 10, 5)));
  CollectingCollector out;
  ASSERT_TRUE(op->ProcessBatch(Events({{"db", 7 * kMinute, 1}}), 0, out).ok());
  ASSERT_TRUE(op->OnWatermark(Watermark(INT64_MAX), out).ok());
  EXPECT_EQ(JsonRows(out.batches).size(), 2u);
}

// Windows over a TIMESTAMP_LTZ time in a session zone: laid out on its wall clock, as Flink's
// TimeWindowUtil (the rows and windows of Flink's TumblingSliceAssignerTest.testDstSaving, and
// the firing times of TimeWindowUtilTest): America/Los_Angeles loses an hour on 2021-03-14 and
// repeats one on 2021-11-07, so a 4-hour window from local midnight spans 3 and 5 real hours, and
// a window ending in the repeated hour fires only after its second pass.
TEST_P(WindowAggregate, LtzWindowsFollowTheSessionZonesWallClockAcrossDaylightSaving) {
  auto spec = TileSpec(Window(WindowKind::kTumble, 4 * 60));
  auto schema = std::make_shared<BatchSchema>(*spec.input);
  schema->fields[1].type = DataType::TimestampTz();
  spec.input = schema;
  spec.zone = TimeZone::Load("America/Los_Angeles").ValueOrDie();
  auto op = Open(spec);
  auto rows = [&](const std::string& key, const std::vector<int64_t>& epoch_ms) {
    RecordBatch b(schema);
    for (int64_t ms : epoch_ms) {
      b.mutable_column(0).AppendBytes(key);
      b.mutable_column(1).Append<int64_t>(ms * 1000);
      b.mutable_column(2).Append<int32_t>(1);
    }
    return b;
  };
  CollectingCollector out;
  ASSERT_TRUE(
      op->ProcessBatch(rows("mar", {1615708800000, 1615712400000, 1615716000000, 1615719600000}), 0,
                       out)
          .ok());
  ASSERT_TRUE(op->ProcessBatch(rows("nov", {1636268400000, 1636272000000, 1636275600000,
                                            1636279200000, 1636282800000, 1636286400000}),
                               0, out)
                  .ok());
  // [03-14 00:00, 04:00) local fires at 03:59:59.999 PDT (10:59:59.999Z), not an hour later.
  ASSERT_TRUE(op->OnWatermark(Watermark(1615719599999000 - 1), out).ok());
  EXPECT_TRUE(out.batches.empty());
  ASSERT_TRUE(op->OnWatermark(Watermark(1615719599999000), out).ok());
  EXPECT_EQ(JsonRows(out.batches),
            (std::vector<std::string>{
                "{\"course\":\"mar\",\"window_start\":\"2021-03-14T00:00:00\","
                "\"window_end\":\"2021-03-14T04:00:00\",\"window_time\":\"2021-03-14T10:"
                "59:59.999Z\",\"agg0\":3}\n"}));
  out.batches.clear();
  // [11-07 00:00, 04:00) local holds both passes of 01:00: five rows, and its window_time is
  // 03:59:59.999 PST (11:59:59.999Z).
  ASSERT_TRUE(op->OnWatermark(Watermark(INT64_MAX), out).ok());
  std::vector<std::string> fired = JsonRows(out.batches);
  std::sort(fired.begin(), fired.end());
  ASSERT_EQ(fired.size(), 3u);
  EXPECT_NE(fired[0].find("\"window_start\":\"2021-03-14T04:00:00\""), std::string::npos)
      << fired[0];
  EXPECT_NE(fired[1].find("\"window_start\":\"2021-11-07T00:00:00\",\"window_end\":"
                          "\"2021-11-07T04:00:00\",\"window_time\":\"2021-11-07T11:59:"
                          "59.999Z\",\"agg0\":5"),
            std::string::npos)
      << fired[1];
  EXPECT_NE(fired[2].find("\"window_start\":\"2021-11-07T04:00:00\""), std::string::npos)
      << fired[2];
}

TEST_P(WindowAggregate, AWindowEndingInTheRepeatedHourFiresAfterItsSecondPass) {
  auto spec = TileSpec(Window(WindowKind::kTumble, 60));
  auto schema = std::make_shared<BatchSchema>(*spec.input);
  schema->fields[1].type = DataType::TimestampTz();
  spec.input = schema;
  spec.zone = TimeZone::Load("America/Los_Angeles").ValueOrDie();
  auto op = Open(spec);
  RecordBatch b(schema);
  for (int64_t ms : {int64_t{1636272000000}, int64_t{1636275600000}}) {  // 01:00 PDT, 01:00 PST
    b.mutable_column(0).AppendBytes("k");
    b.mutable_column(1).Append<int64_t>(ms * 1000);
    b.mutable_column(2).Append<int32_t>(1);
  }
  CollectingCollector out;
  ASSERT_TRUE(op->ProcessBatch(b, 0, out).ok());
  // The first pass of 01:59:59.999 (08:59:59.999Z): the hour comes again, the window stays open.
  ASSERT_TRUE(op->OnWatermark(Watermark(1636275599999000), out).ok());
  EXPECT_TRUE(out.batches.empty());
  ASSERT_TRUE(op->OnWatermark(Watermark(1636279199999000), out).ok());
  ASSERT_EQ(JsonRows(out.batches).size(), 1u);
  // window_time is the first pass (java.time's earlier offset), as Flink's toEpochMills.
  EXPECT_NE(JsonRows(out.batches)[0].find("\"window_time\":\"2021-11-07T08:59:59.999Z\","
                                          "\"agg0\":2"),
            std::string::npos)
      << JsonRows(out.batches)[0];
}

// The checkpoint file as floe wrote it before the runtime owned keyed state: the operator's
// blob alone, format 1, with the keyed state nested in it.
std::string FormerLayout(const std::string& file) {
  auto parts = runtime::ParseKeyedTaskState(file).ValueOrDie().value();
  runtime::StateReader op(parts.operator_state);
  EXPECT_EQ(op.GetU32().ValueOrDie(), 3u);
  runtime::StateWriter former;
  former.PutU32(1);
  former.PutI64(op.GetI64().ValueOrDie());  // watermark
  former.PutI64(op.GetI64().ValueOrDie());  // late rows
  former.PutBytes(parts.keyed_state);
  return former.Finish();
}

// The same checkpoint labelled with format 2, whose barriers flushed the window buffer into the
// keyed state (as a buffer of no windows does every batch), so it holds no buffer.
std::string FlushedLayout(const std::string& file) {
  auto parts = runtime::ParseKeyedTaskState(file).ValueOrDie().value();
  runtime::StateWriter op;
  op.PutU32(2);
  op.PutRaw(parts.operator_state.substr(4));
  runtime::StateWriter out;
  runtime::BeginKeyedTaskState(op.data(), parts.key_groups, out);
  out.PutRaw(parts.keyed_state);
  return out.Finish();
}

// State and timers survive a checkpoint: a restored operator fires every open window once, with
// the counts from before and after the restore, and not the windows fired before it: whether the
// barrier left them in the buffer (format 3) or in the keyed state (format 2, and the former
// layout 1, an upgrade).
TEST_P(WindowAggregate, RestoredWindowsFireOnceWithTheirCounts) {
  for (uint32_t layout : {3u, 2u, 1u}) {
    SCOPED_TRACE("layout " + std::to_string(layout));
    WindowAggregateSpec spec = TileSpec();
    if (layout == 2) spec.max_cached_windows = 0;
    auto first = Open(spec);
    CollectingCollector out;
    ASSERT_TRUE(
        first
            ->ProcessBatch(
                Events({{"db", 1 * kMinute, 1}, {"db", 6 * kMinute, 1}, {"ml", 8 * kMinute, 1}}), 0,
                out)
            .ok());
    ASSERT_TRUE(first->OnWatermark(Watermark(5 * kMinute), out).ok());
    ASSERT_EQ(JsonRows(out.batches).size(), 1u);  // [0, 5 min) fired before the checkpoint
    auto state = first.Checkpoint(runtime::CheckpointId(1), out);
    ASSERT_TRUE(state.ok()) << state.status().ToString();

    auto second = Open(spec);
    const std::string file = layout == 3   ? *state
                             : layout == 2 ? FlushedLayout(*state)
                                           : FormerLayout(*state);
    ASSERT_TRUE(second.Restore(file).ok());
    CollectingCollector after;
    ASSERT_TRUE(
        second->ProcessBatch(Events({{"db", 9 * kMinute, 1}, {"db", 2 * kMinute, 1}}), 0, after)
            .ok());
    EXPECT_EQ(second->late_records_dropped(), 1);  // the restored watermark still holds
    ASSERT_TRUE(second->OnWatermark(Watermark(INT64_MAX), after).ok());
    std::vector<std::string> rows = JsonRows(after.batches);
    std::sort(rows.begin(), rows.end());
    ASSERT_EQ(rows.size(), 2u);
    EXPECT_NE(rows[0].find("\"course\":\"db\""), std::string::npos);
    EXPECT_NE(rows[0].find("\"agg0\":2"), std::string::npos) << rows[0];
    EXPECT_NE(rows[1].find("\"agg0\":1"), std::string::npos) << rows[1];
  }
}

std::vector<std::string> Sorted(std::vector<std::string> rows) {
  std::sort(rows.begin(), rows.end());
  return rows;
}

// The windows held in memory change nothing: a random stream with late rows, watermarks every few
// dozen rows and checkpoints restored at random points gives the rows and the late count of the
// same operator writing every row's windows to the state at once (one-row batches, no cache).
TEST_P(WindowAggregate, WindowsHeldInMemoryGiveTheResultsOfWritingEachRowAtOnce) {
  const std::vector<WindowSpec> windows = {
      Window(WindowKind::kTumble, 5), Window(WindowKind::kHop, 10, 5),
      Window(WindowKind::kCumulate, 10, 5), Window(WindowKind::kSession, 4)};
  for (const WindowSpec& window : windows) {
    SCOPED_TRACE(static_cast<int>(window.kind));
    std::mt19937 rng(11);
    std::vector<Event> events;
    std::vector<size_t> watermark_after, checkpoint_after;  // event positions
    int64_t newest = 0;
    for (size_t i = 0; i < 4000; ++i) {
      const int64_t t = static_cast<int64_t>(i) * 10'000'000 - rng() % (15 * kMinute);
      newest = std::max(newest, t);
      events.push_back({"k" + std::to_string(rng() % 30), t, static_cast<int32_t>(rng() % 100)});
      if (rng() % 40 == 0) watermark_after.push_back(i);
      if (rng() % 300 == 0) checkpoint_after.push_back(i);
    }
    // `restore`: each checkpoint is restored into a fresh operator, else the same one goes on.
    auto run = [&](size_t cache, bool checkpoints, bool restore = true) {
      WindowAggregateSpec spec = TileSpec(window);
      spec.aggregates.push_back(Agg(AggregateFunction::kSum, 2, DataType::Int64()));
      spec.aggregates.push_back(Agg(AggregateFunction::kMin, 2, DataType::Int32()));
      spec.max_cached_windows = cache;
      auto op = Open(spec);
      CollectingCollector out;
      int64_t high = INT64_MIN;
      size_t next_wm = 0, next_chk = 0, from = 0;
      for (size_t i = 0; i < events.size(); ++i) {
        high = std::max(high, *events[i].time);
        const bool wm = next_wm < watermark_after.size() && watermark_after[next_wm] == i;
        const bool chk =
            checkpoints && next_chk < checkpoint_after.size() && checkpoint_after[next_chk] == i;
        next_wm += wm;
        next_chk += chk;
        if (cache == 0 || wm || chk || i + 1 == events.size()) {  // a batch ends here
          std::vector<Event> rows(events.begin() + static_cast<std::ptrdiff_t>(from),
                                  events.begin() + static_cast<std::ptrdiff_t>(i + 1));
          from = i + 1;
          EXPECT_TRUE(op->ProcessBatch(Events(rows), 0, out).ok());
        }
        if (wm) {
          EXPECT_TRUE(op->OnWatermark(Watermark(high - 3 * kMinute), out).ok());
          FinishWork(op.op(), out);
        }
        if (chk) {
          auto state = op.Checkpoint(runtime::CheckpointId(next_chk), out);
          EXPECT_TRUE(state.ok()) << state.status().ToString();
          if (restore) {
            op = Open(spec);
            EXPECT_TRUE(op.Restore(*state).ok());
          }
          FinishWork(op.op(), out);
        }
      }
      EXPECT_TRUE(op->OnWatermark(Watermark(INT64_MAX), out).ok());
      FinishWork(op.op(), out);
      EXPECT_EQ(op->open_windows(), 0u);
      return std::make_pair(Sorted(JsonRows(out.batches)), op->late_records_dropped());
    };
    const auto [expected_rows, expected_late] = run(0, false);
    const auto [rows, late] = run(100000, true);
    EXPECT_GT(expected_late, 0);  // the stream has late rows
    EXPECT_GT(expected_rows.size(), 100u);
    EXPECT_EQ(late, expected_late);
    EXPECT_EQ(rows, expected_rows);
    const auto [small_cache_rows, small_cache_late] = run(3, true);  // flushed by its size too
    EXPECT_EQ(small_cache_late, expected_late);
    EXPECT_EQ(small_cache_rows, expected_rows);
    // Checkpoints the same operator goes on after: rows after a barrier's flush read the state.
    const auto [kept_rows, kept_late] = run(100000, true, /*restore=*/false);
    EXPECT_EQ(kept_late, expected_late);
    EXPECT_EQ(kept_rows, expected_rows);
  }
}

// New keys every window: keys whose windows fired leave the buffer while other keys' windows are
// held (their places in it renumbered), and one key (k0) comes back in every window; every window
// still fires once, with its count, on both backends.
TEST_P(WindowAggregate, KeysWhoseWindowsFiredLeaveTheBufferAndComeBack) {
  constexpr int kKeys = 70000;
  auto op = Open(TileSpec(Window(WindowKind::kTumble, 5)));
  CollectingCollector out;
  for (int64_t w = 0; w < 3; ++w) {
    std::vector<Event> rows;
    for (int k = 0; k < kKeys; ++k) {
      rows.push_back({std::to_string(w) + "-" + std::to_string(k), w * 5 * kMinute + k % 1000, 1});
      if (k % 500 == 0) rows.push_back({"k0", w * 5 * kMinute + 7, 1});  // k0 again and again
      if (rows.size() < 4096 && k + 1 < kKeys) continue;
      ASSERT_TRUE(op->ProcessBatch(Events(rows), 0, out).ok());
      rows.clear();
    }
    // Held in memory, not in the keyed state: no entry, no timer, before and after they fire.
    EXPECT_EQ(op.state().num_entries(), 0u);
    ASSERT_TRUE(op->OnWatermark(Watermark((w + 1) * 5 * kMinute), out).ok());
    FinishWork(op.op(), out);
    EXPECT_EQ(op.state().num_entries(), 0u);
    EXPECT_FALSE(op.state().NextTimer(runtime::TimeDomain::kEventTime).has_value());
  }
  std::map<std::string, int64_t> count_of_k0;
  size_t fired = 0;
  for (const RecordBatch& b : out.batches) {
    for (size_t r = 0; r < b.num_rows(); ++r, ++fired) {
      const int64_t n = b.column(4).Get<int64_t>(r);
      if (b.column(0).GetBytes(r) == "k0") {
        count_of_k0[std::to_string(b.column(1).Get<int64_t>(r))] += n;
      } else {
        EXPECT_EQ(n, 1) << b.column(0).GetBytes(r);
      }
    }
  }
  EXPECT_EQ(fired, 3u * (kKeys + 1));  // each window: its keys and k0
  ASSERT_EQ(count_of_k0.size(), 3u);
  for (const auto& [start, n] : count_of_k0) EXPECT_EQ(n, kKeys / 500) << start;
  EXPECT_EQ(op->open_windows(), 0u);
}

// Over a changelog, a session whose rows were all taken back fires nothing and leaves nothing in
// the state: held in memory or written at a barrier first (its key's session list too).
TEST_P(WindowAggregate, ASessionWhollyRetractedLeavesNoState) {
  for (const bool barrier : {false, true}) {
    SCOPED_TRACE(barrier);
    WindowAggregateSpec spec = TileSpec(Window(WindowKind::kSession, 10));
    spec.input = runtime::WithRowKindColumn(*EventSchema());
    spec.changelog = true;
    auto op = Open(spec);
    CollectingCollector out;
    RecordBatch rows(spec.input);
    for (const char* kind : {"+I", "-D"}) {
      rows.mutable_column(0).AppendBytes("db");
      rows.mutable_column(1).Append<int64_t>(kMinute);
      rows.mutable_column(2).Append<int32_t>(1);
      rows.mutable_column(3).AppendBytes(kind);
    }
    ASSERT_TRUE(op->ProcessBatch(rows, 0, out).ok());
    if (barrier) {
      ASSERT_TRUE(op.Checkpoint(runtime::CheckpointId(1), out).ok());
    }
    ASSERT_TRUE(op->OnWatermark(Watermark(INT64_MAX), out).ok());
    FinishWork(op.op(), out);
    EXPECT_TRUE(JsonRows(out.batches).empty());
    EXPECT_EQ(op->open_windows(), 0u);
  }
}

// Flink's option names the buffer; floe counts windows, more of them on the heap backend. (The
// planner reads the option: PlanJob.WindowBufferLimitFollowsTheOptionElseTheBackend.)
TEST(WindowBufferLimit, DefaultFollowsTheBackend) {
  EXPECT_EQ(DefaultWindowBufferLimit("hashmap"), 1000000u);
  EXPECT_EQ(DefaultWindowBufferLimit("rocksdb"), 100000u);
}

// Scaled out by Kafka partition: rows carry their claim's split; the claim's partition is the
// key group of their state; fired windows carry the split of the claim holding the group now.
// A group taken over from another instance's snapshot fires at once what the new holder's
// watermark passed.
TEST_P(WindowAggregate, ScaledOutEachPartitionIsAKeyGroupAndItsWindowsCarryItsClaim) {
  WindowAggregateSpec spec = TileSpec();
  auto input = std::make_shared<BatchSchema>(*EventSchema());
  input->fields.push_back(Field{runtime::kSourceSplitColumn, DataType::String(), false, 0});
  spec.input = input;
  spec.split_column = 3;
  auto rows_of = [&](const std::vector<std::pair<Event, std::string>>& events) {
    RecordBatch b(input);
    RecordBatch plain = Events([&] {
      std::vector<Event> e;
      for (const auto& [event, split] : events) e.push_back(event);
      return e;
    }());
    for (size_t c = 0; c < 3; ++c) b.mutable_column(c) = plain.column(c);
    for (const auto& [event, split] : events) b.mutable_column(3).AppendBytes(split);
    return b;
  };
  auto claim = [](std::string split, uint32_t group, bool begins = true) {
    return runtime::ClaimChange{std::move(split), group, begins, ""};
  };
  CollectingCollector out;
  auto a = Open(spec);
  ASSERT_TRUE(a->OnClaimChange(claim("t/0/1", 0), out).ok());
  ASSERT_TRUE(a->OnClaimChange(claim("t/1/1", 1), out).ok());
  ASSERT_TRUE(a->ProcessBatch(rows_of({{{"db", 1 * kMinute, 1}, "t/0/1"},
                                       {{"ml", 2 * kMinute, 1}, "t/1/1"},
                                       {{"db", 6 * kMinute, 1}, "t/0/1"}}),
                              0, out)
                  .ok());
  // What a's checkpoint holds: groups 0 and 1, nothing fired yet (the runtime's order: the
  // operator writes what it holds in memory before the barrier, then the state is snapshotted).
  ASSERT_TRUE(a->PrepareBarrier(runtime::CheckpointId(1), out).ok());
  runtime::StateWriter w;
  ASSERT_TRUE(a.state().Snapshot(w).ok());
  const std::string snapshot = w.Finish();
  ASSERT_TRUE(a->OnWatermark(Watermark(5 * kMinute - 1000), out).ok());
  EXPECT_EQ(Sorted(JsonRows(out.batches)),
            Sorted({R"({"course":"db","window_start":"1970-01-01T00:00:00","window_end":)"
                    R"("1970-01-01T00:05:00","window_time":"1970-01-01T00:04:59.999","agg0":1,)"
                    R"("$source_split":"t/0/1"})"
                    "\n",
                    R"({"course":"ml","window_start":"1970-01-01T00:00:00","window_end":)"
                    R"("1970-01-01T00:05:00","window_time":"1970-01-01T00:04:59.999","agg0":1,)"
                    R"("$source_split":"t/1/1"})"
                    "\n"}));

  // b, its watermark at 10 min, takes partition 0 over from a's snapshot (the runtime restores
  // the group, then the operator hears of the claim): both of its windows fire, as b's claim.
  auto b = Open(spec);
  CollectingCollector after;
  ASSERT_TRUE(b->OnWatermark(Watermark(10 * kMinute), after).ok());
  runtime::StateReader in(snapshot);
  ASSERT_TRUE(b.state().RestoreKeyGroup(in, 0).ok());
  ASSERT_TRUE(b->OnClaimChange(claim("t/0/2", 0), after).ok());
  FinishWork(b.op(), after);
  std::vector<std::string> fired = JsonRows(after.batches);
  ASSERT_EQ(fired.size(), 2u);
  for (const std::string& row : fired) {
    EXPECT_NE(row.find(R"("course":"db")"), std::string::npos) << row;
    EXPECT_NE(row.find(R"("agg0":1,"$source_split":"t/0/2")"), std::string::npos) << row;
  }
  // Rows of a claim b does not hold, or no longer holds, are a bug upstream: refused.
  Status st = b->ProcessBatch(rows_of({{{"ml", 11 * kMinute, 1}, "t/1/1"}}), 0, after);
  EXPECT_EQ(st.code(), StatusCode::kInternal) << st.ToString();
  ASSERT_TRUE(b.state().DropKeyGroup(0).ok());
  ASSERT_TRUE(b->OnClaimChange(claim("t/0/2", 0, false), after).ok());
  st = b->ProcessBatch(rows_of({{{"db", 11 * kMinute, 1}, "t/0/2"}}), 0, after);
  EXPECT_NE(st.message().find("split 't/0/2' reached a keyed operator without its claim"),
            std::string::npos)
      << st.ToString();
}

// SESSION(gap 10 min): rows that overlap or touch a session extend it (merging sessions a row
// bridges), a row past the gap opens a new one; each session fires once, when the watermark
// passes its end.
TEST_P(WindowAggregate, SessionsMergeAndFireOnce) {
  auto op = Open(TileSpec(Window(WindowKind::kSession, 10)));
  CollectingCollector out;
  // a: 0, 5, 14 -> one session [0, 24); 40 -> [40, 50).
  // b: 30, 10 (two sessions), then 20 bridges both -> [10, 40).
  ASSERT_TRUE(op->ProcessBatch(Events({{"a", 0, 1},
                                       {"a", 5 * kMinute, 1},
                                       {"b", 30 * kMinute, 1},
                                       {"b", 10 * kMinute, 1},
                                       {"a", 14 * kMinute, 1},
                                       {"a", 40 * kMinute, 1},
                                       {"b", 20 * kMinute, 1}}),
                               0, out)
                  .ok());
  ASSERT_TRUE(op->OnWatermark(Watermark(30 * kMinute), out).ok());  // a's first session fires
  std::vector<std::string> rows = JsonRows(out.batches);
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_NE(rows[0].find("\"course\":\"a\",\"window_start\":\"1970-01-01T00:00:00\","
                         "\"window_end\":\"1970-01-01T00:24:00\""),
            std::string::npos)
      << rows[0];
  EXPECT_NE(rows[0].find("\"agg0\":3"), std::string::npos) << rows[0];
  // A row that would extend a's fired session is late; b's open session still takes rows.
  ASSERT_TRUE(
      op->ProcessBatch(Events({{"a", 20 * kMinute, 1}, {"b", 25 * kMinute, 1}}), 0, out).ok());
  EXPECT_EQ(op->late_records_dropped(), 1);

  // The rest survives a checkpoint.
  auto state = op.Checkpoint(runtime::CheckpointId(1), out);
  ASSERT_TRUE(state.ok()) << state.status().ToString();
  auto restored = Open(TileSpec(Window(WindowKind::kSession, 10)));
  ASSERT_TRUE(restored.Restore(*state).ok());
  CollectingCollector after;
  ASSERT_TRUE(restored->OnWatermark(Watermark(INT64_MAX), after).ok());
  rows = Sorted(JsonRows(after.batches));
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_NE(rows[0].find("\"window_start\":\"1970-01-01T00:40:00"), std::string::npos) << rows[0];
  EXPECT_NE(rows[0].find("\"agg0\":1"), std::string::npos) << rows[0];
  EXPECT_NE(rows[1].find("\"course\":\"b\",\"window_start\":\"1970-01-01T00:10:00\","
                         "\"window_end\":\"1970-01-01T00:40:00\""),
            std::string::npos)
      << rows[1];
  EXPECT_NE(rows[1].find("\"agg0\":4"), std::string::npos) << rows[1];
  EXPECT_EQ(restored->open_windows(), 0u);
}

// Rows and a checkpoint between two slices of one watermark step change nothing: the sessions
// behind the watermark fire as they were (a row that touches one opens its own session, as after
// it fired), and the restored operator fires the rest once.
TEST_P(WindowAggregate, RowsAndACheckpointBetweenSlicesLeaveTheResultsOfOneStep) {
  const WindowAggregateSpec spec = TileSpec(Window(WindowKind::kSession, 10));
  const int keys = 10'000;
  auto op = Open(spec);
  CollectingCollector out;
  // [1, 11 min) touches only the fired [0, 10 min): behind the watermark, late.
  std::vector<Event> first, second = {{"c0", 1 * kMinute, 1}};
  for (int k = 0; k < keys; ++k) {
    first.push_back({"c" + std::to_string(k), 0, 1});             // [0, 10 min)
    second.push_back({"c" + std::to_string(k), 9 * kMinute, 1});  // touches it: [9, 19 min)
  }
  ASSERT_TRUE(op->ProcessBatch(Events(first), 0, out).ok());
  ASSERT_TRUE(op->OnWatermark(Watermark(15 * kMinute), out).ok());
  ASSERT_EQ(JsonRows(out.batches).size(), 4096u);  // one slice fired
  ASSERT_TRUE(op->ProcessBatch(Events(second), 0, out).ok());
  EXPECT_EQ(op->late_records_dropped(), 1);
  auto state = op.Checkpoint(runtime::CheckpointId(1), out);
  ASSERT_TRUE(state.ok()) << state.status().ToString();
  EXPECT_TRUE(out.watermarks.empty());

  auto restored = Open(spec);
  ASSERT_TRUE(restored.Restore(*state).ok());
  FinishWork(restored.op(), out);  // the rest of the step, before anything else
  ASSERT_EQ(out.watermarks.size(), 1u);
  ASSERT_TRUE(restored->OnWatermark(Watermark(INT64_MAX), out).ok());
  FinishWork(restored.op(), out);
  std::map<std::string, int> windows;  // "start end count" -> keys
  for (const std::string& row : JsonRows(out.batches)) {
    auto field = [&](const std::string& name) {
      size_t at = row.find("\"" + name + "\":");
      return at == std::string::npos ? std::string()
                                     : row.substr(at, row.find_first_of(",}", at) - at);
    };
    ++windows[field("window_start") + " " + field("window_end") + " " + field("agg0")];
  }
  EXPECT_EQ(windows,
            (std::map<std::string, int>{{"\"window_start\":\"1970-01-01T00:00:00\" "
                                         "\"window_end\":\"1970-01-01T00:10:00\" \"agg0\":1",
                                         keys},
                                        {"\"window_start\":\"1970-01-01T00:09:00\" "
                                         "\"window_end\":\"1970-01-01T00:19:00\" \"agg0\":1",
                                         keys}}));
  EXPECT_EQ(restored->open_windows(), 0u);
}

TEST_P(WindowAggregate, SpecsThatCannotRunAreRefused) {
  WindowAggregateSpec no_time = TileSpec();
  no_time.window.time_column = 0;  // a STRING column
  EXPECT_FALSE(WindowAggregateOperator::Make(no_time).ok());
  EXPECT_FALSE(WindowAggregateOperator::Make(TileSpec(Window(WindowKind::kCumulate, 5, 2))).ok());
  EXPECT_FALSE(WindowAggregateOperator::Make(TileSpec(Window(WindowKind::kHop, 10, 0))).ok());
  EXPECT_FALSE(WindowAggregateOperator::Make(TileSpec(Window(WindowKind::kSession, 0))).ok());
}

// The watermark assigner feeding the window aggregate, as the planner chains them, with the
// results by (key, window start).
class AssignerThenWindow final : public runtime::Collector {
 public:
  explicit AssignerThenWindow(Harness* window) : window_(window) {}
  Status Emit(RecordBatch batch) override { return (*window_)->ProcessBatch(batch, 0, fired); }
  Status EmitWatermark(Watermark w) override { return (*window_)->OnWatermark(w, fired); }
  CollectingCollector fired;

 private:
  Harness* window_;
};

using CountsByWindow = std::map<std::pair<std::string, int64_t>, int64_t>;

CountsByWindow CountsOf(const std::vector<RecordBatch>& batches) {
  CountsByWindow counts;
  for (const RecordBatch& b : batches) {
    const std::vector<Field>& f = b.schema()->fields;
    auto col = [&](const std::string& name) {
      return std::find_if(f.begin(), f.end(), [&](const Field& x) { return x.name == name; }) -
             f.begin();
    };
    const size_t key = col("course"), start = col("window_start"), count = col("agg0");
    for (size_t r = 0; r < b.num_rows(); ++r) {
      counts[{std::string(b.column(key).GetBytes(r)), b.column(start).Get<int64_t>(r)}] +=
          b.column(count).Get<int64_t>(r);
    }
  }
  return counts;
}

// What Flink's SQL gives for TUMBLE COUNT over `events` in this order, worked out here from its
// rules alone: the assigner forwards each record, then emits the watermark (max time - delay)
// if it has risen by more than the interval since the last one emitted; the window operator
// drops a record whose window's last millisecond the watermark has reached (end - 1 <= wm).
CountsByWindow FlinkCounts(const std::vector<Event>& events, int64_t size_ms, int64_t delay_ms,
                           int64_t interval_ms) {
  CountsByWindow counts;
  int64_t current = INT64_MIN, last = INT64_MIN;  // milliseconds
  for (const Event& e : events) {
    const int64_t t = *e.time / 1000, start = t - t % size_ms;
    if (last == INT64_MIN || start + size_ms - 1 > last) ++counts[{*e.course, start * 1000}];
    current = std::max(current, t - delay_ms);
    if (last == INT64_MIN || current - last > interval_ms) last = current;
  }
  return counts;
}

// Lateness is a property of record order: one input of a few hundred out-of-order events, cut
// into two batches at every point, gives Flink's rows every time (late rows dropped as Flink
// drops them, including those that share a batch with the rows that made them late).
TEST(WatermarkAssignerAndWindow, LateRowsAreTheSameWhereverTheInputIsSplit) {
  constexpr int64_t kSizeMs = 1000, kDelayMs = 300, kIntervalMs = 200;
  std::vector<Event> events;
  uint64_t seed = 24;
  auto next = [&seed](uint64_t bound) {
    seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
    return static_cast<int64_t>((seed >> 33) % bound);
  };
  int64_t t = 1'700'000'000'000;  // milliseconds
  for (int i = 0; i < 300; ++i) {
    t += next(120);
    const int64_t back = next(100) < 15 ? next(1500) : 0;  // some out of order, some late
    events.push_back({next(2) == 0 ? "db" : "ml", (t - back) * 1000, 1});
  }
  const CountsByWindow expected = FlinkCounts(events, kSizeMs, kDelayMs, kIntervalMs);
  int64_t expected_rows = 0;
  for (const auto& [window, n] : expected) expected_rows += n;
  ASSERT_LT(expected_rows, 300) << "the input must hold late rows";
  WindowSpec window = Window(WindowKind::kTumble, 1);
  window.size_ms = kSizeMs;
  for (size_t cut = 0; cut <= events.size(); ++cut) {
    Harness op = Open(TileSpec(window));
    WatermarkAssignerOperator assigner(1, kDelayMs * 1000, std::chrono::milliseconds(kIntervalMs));
    AssignerThenWindow chain(&op);
    ASSERT_TRUE(
        assigner.ProcessBatch(Events({events.begin(), events.begin() + cut}), 0, chain).ok());
    ASSERT_TRUE(assigner.ProcessBatch(Events({events.begin() + cut, events.end()}), 0, chain).ok());
    ASSERT_TRUE(assigner.OnWatermark(Watermark(INT64_MAX), chain).ok());
    ASSERT_EQ(CountsOf(chain.fired.batches), expected) << "cut after " << cut << " rows";
  }
}

}  // namespace
}  // namespace floe::sql
