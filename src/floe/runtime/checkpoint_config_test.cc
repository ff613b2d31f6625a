#include "floe/runtime/checkpoint_config.h"

#include <gtest/gtest.h>

namespace floe::runtime {
namespace {

using std::chrono::milliseconds;

TEST(ParseDuration, AcceptsFlinkSpellings) {
  EXPECT_EQ(*ParseDuration("1s"), milliseconds(1000));
  EXPECT_EQ(*ParseDuration("500 ms"), milliseconds(500));
  EXPECT_EQ(*ParseDuration("2min"), milliseconds(120000));
  EXPECT_EQ(*ParseDuration("1 h"), milliseconds(3600000));
  EXPECT_EQ(*ParseDuration("250"), milliseconds(250));
  EXPECT_EQ(*ParseDuration(" 3 m "), milliseconds(180000));
  EXPECT_EQ(*ParseDuration("10 SECONDS"), milliseconds(10000));
  EXPECT_EQ(*ParseDuration("1d"), milliseconds(86400000));
  EXPECT_EQ(*ParseDuration("1500us"), milliseconds(1));
  EXPECT_EQ(*ParseDuration("0"), milliseconds(0));
}

TEST(ParseDuration, RejectsGarbage) {
  for (const char* bad : {"", "s", "-1s", "1.5s", "10 parsecs", "1 s s", "99999999999999999999"}) {
    auto d = ParseDuration(bad);
    EXPECT_FALSE(d.ok()) << bad;
    if (!d.ok()) {
      EXPECT_TRUE(d.status().IsInvalidArgument()) << bad;
    }
  }
}

TEST(CheckpointConfig, DefaultsFollowFlink) {
  auto c = CheckpointConfig::FromOptions({});
  ASSERT_TRUE(c.ok());
  EXPECT_FALSE(c->periodic());
  EXPECT_EQ(c->mode, CheckpointingMode::kExactlyOnce);
  EXPECT_EQ(c->timeout, milliseconds(600000));
  EXPECT_EQ(c->max_concurrent, 1);
  EXPECT_EQ(c->tolerable_failed, 0);
  EXPECT_EQ(c->num_retained, 1);
  EXPECT_FALSE(c->incremental);
}

TEST(CheckpointConfig, ReadsFlinkOptions) {
  auto c = CheckpointConfig::FromOptions({
      {"execution.checkpointing.interval", "30 s"},
      {"execution.checkpointing.mode", "AT_LEAST_ONCE"},
      {"execution.checkpointing.min-pause", "10s"},
      {"execution.checkpointing.timeout", "2 min"},
      {"execution.checkpointing.max-concurrent-checkpoints", "2"},
      {"execution.checkpointing.tolerable-failed-checkpoints", "3"},
      {"execution.checkpointing.externalized-checkpoint-retention", "DELETE_ON_CANCELLATION"},
      {"execution.checkpointing.dir", "/tmp/chk"},
      {"state.checkpoints.num-retained", "4"},
      {"execution.checkpointing.incremental", "true"},
      {"execution.savepoint.ignore-unclaimed-state", "true"},
      {"pipeline.name", "ignored"},
  });
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(c->interval, milliseconds(30000));
  EXPECT_EQ(c->mode, CheckpointingMode::kAtLeastOnce);
  EXPECT_EQ(c->min_pause, milliseconds(10000));
  EXPECT_EQ(c->timeout, milliseconds(120000));
  EXPECT_EQ(c->max_concurrent, 2);
  EXPECT_EQ(c->tolerable_failed, 3);
  EXPECT_EQ(c->retention, CheckpointRetention::kDeleteOnCancellation);
  EXPECT_EQ(c->dir, "/tmp/chk");
  EXPECT_EQ(c->num_retained, 4);
  EXPECT_TRUE(c->incremental);
  EXPECT_TRUE(c->ignore_unclaimed_state);
  // Flink's deprecated key.
  EXPECT_TRUE(CheckpointConfig::FromOptions({{"state.backend.incremental", "true"}})->incremental);
}

void ExpectRejected(std::map<std::string, std::string> options, const std::string& needle) {
  auto c = CheckpointConfig::FromOptions(options);
  ASSERT_FALSE(c.ok()) << needle;
  EXPECT_NE(c.status().message().find(needle), std::string::npos) << c.status().ToString();
}

// Flink's canonical `file:///x` once wrote checkpoints to ./file:/x under the working directory.
TEST(CheckpointConfig, EveryFormOfTheDirectoryNamesTheSamePlace) {
  for (const char* form : {"/tmp/x/chk", "file:///tmp/x/chk", "file:/tmp/x/chk",
                           "file://localhost/tmp/x/chk", "/tmp/x/chk/"}) {
    auto c = CheckpointConfig::FromOptions(
        {{"execution.checkpointing.dir", form}, {"execution.checkpointing.savepoint-dir", form}});
    ASSERT_TRUE(c.ok()) << form << ": " << c.status().ToString();
    EXPECT_EQ(c->dir, "/tmp/x/chk") << form;
    EXPECT_EQ(c->savepoint_dir, "/tmp/x/chk") << form;
  }
}

// Flink's layout: <dir>/<job id>/chk-N; savepoints beside the jobs' directories by default.
TEST(CheckpointConfig, ScopeToJobPutsCheckpointsUnderTheJobId) {
  auto c = CheckpointConfig::FromOptions({{"state.checkpoints.dir", "file:///tmp/chk"}});
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  c->ScopeToJob("3f2a");
  EXPECT_EQ(c->dir, "/tmp/chk/3f2a");
  EXPECT_EQ(c->base_dir, "/tmp/chk");
  EXPECT_EQ(c->savepoint_dir, "/tmp/chk/savepoints");
  auto explicit_savepoints = CheckpointConfig::FromOptions(
      {{"state.checkpoints.dir", "/tmp/chk"}, {"state.savepoints.dir", "/tmp/sp"}});
  ASSERT_TRUE(explicit_savepoints.ok());
  explicit_savepoints->ScopeToJob("3f2a");
  EXPECT_EQ(explicit_savepoints->savepoint_dir, "/tmp/sp");
  CheckpointConfig none;
  none.ScopeToJob("3f2a");
  EXPECT_EQ(none.dir, "");
}

TEST(CheckpointConfig, RejectsBadValuesWithTheRuleAndTheNumbers) {
  ExpectRejected({{"execution.checkpointing.timeout", "0"}},
                 "execution.checkpointing.timeout must be > 0, got 0 ms");
  ExpectRejected({{"execution.checkpointing.mode", "EXACTLY_TWICE"}},
                 "unknown value 'EXACTLY_TWICE' (allowed: EXACTLY_ONCE, AT_LEAST_ONCE)");
  ExpectRejected({{"execution.checkpointing.interval", "5 ms"}},
                 "must be at least 10 ms (or unset to disable periodic checkpoints), got 5 ms");
  ExpectRejected({{"execution.checkpointing.max-concurrent-checkpoints", "0"}}, ">= 1, got 0");
  ExpectRejected({{"execution.checkpointing.tolerable-failed-checkpoints", "-1"}}, ">= 0, got -1");
  ExpectRejected({{"state.checkpoints.num-retained", "0"}}, "num-retained must be >= 1, got 0");
  ExpectRejected({{"execution.checkpointing.timeout", "soon"}}, "execution.checkpointing.timeout");
  ExpectRejected({{"execution.checkpointing.externalized-checkpoint-retention", "KEEP"}},
                 "RETAIN_ON_CANCELLATION");
  ExpectRejected({{"execution.checkpointing.unaligned.enabled", "true"}}, "unaligned");
  ExpectRejected({{"execution.checkpointing.incremental", "yes"}},
                 "execution.checkpointing.incremental: 'yes' must be 'true' or 'false'");
  ExpectRejected({{"execution.checkpointing.dir", "hdfs://nn/chk"}},
                 "floe reads and writes local paths, file: URIs and s3:// URIs, not 'hdfs:'");
  ExpectRejected({{"execution.checkpointing.dir", "s3://bucket/chk"},
                  {"s3.endpoint", "http://127.0.0.1:9000"},
                  {"s3.access-key", "k"},
                  {"s3.secret-key", "s"},
                  {"s3.path.style.access", "maybe"}},
                 "'s3.path.style.access' must be 'true' or 'false'");
}

TEST(CheckpointConfig, CheckpointsOnS3GetTheirOwnFileIOWithFlinksKeys) {
  auto c = CheckpointConfig::FromOptions({{"execution.checkpointing.dir", "s3://bucket/chk"},
                                          {"s3.endpoint", "http://127.0.0.1:9000"},
                                          {"s3.access-key", "k"},
                                          {"s3.secret-key", "s"},
                                          {"s3.region", "eu-west-1"}})
               .ValueOrDie();
  io::S3Config s3 = c.file_io.s3_config().value();
  EXPECT_EQ(s3.endpoint, "http://127.0.0.1:9000");
  EXPECT_EQ(s3.access_key_id, "k");
  EXPECT_EQ(s3.region, "eu-west-1");
  // Local checkpoints need no credentials; given keys still reach a savepoint on s3://.
  EXPECT_TRUE(CheckpointConfig::FromOptions({{"execution.checkpointing.dir", "/tmp/chk"}}).ok());
  auto local = CheckpointConfig::FromOptions({{"execution.checkpointing.dir", "/tmp/chk"},
                                              {"s3.access-key", "k2"},
                                              {"s3.secret-key", "s2"}})
                   .ValueOrDie();
  EXPECT_EQ(local.file_io.s3_config()->access_key_id, "k2");
}

}  // namespace
}  // namespace floe::runtime
