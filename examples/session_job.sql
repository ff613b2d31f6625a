-- The lesson's session job: per-learner sessions with a ten-minute gap, into an Iceberg table.
--   floe run examples/session_job.sql --var KAFKA=host:port --var WH=/path/to/warehouse
SET 'execution.checkpointing.interval' = '2 s';
CREATE TABLE progress (
  event_id STRING,
  learner_id STRING,
  course_id STRING,
  lesson_id STRING,
  event_time TIMESTAMP(3),
  WATERMARK FOR event_time AS event_time - INTERVAL '10' MINUTE
) WITH (
  'connector' = 'kafka',
  'topic' = 'learning.progress',
  'properties.bootstrap.servers' = '${KAFKA}',
  'properties.group.id' = 'tlp-flink-sessions',
  'scan.startup.mode' = 'earliest-offset',
  'scan.watermark.idle-timeout' = '5 s',
  'format' = 'json',
  'json.timestamp-format.standard' = 'ISO-8601'
);
CREATE TABLE learner_sessions (
  learner_id STRING,
  session_start TIMESTAMP(3),
  session_end TIMESTAMP(3),
  events BIGINT,
  lessons BIGINT
) WITH (
  'connector' = 'iceberg',
  'catalog-type' = 'hadoop',
  'warehouse' = '${WH}',
  'catalog-database' = 'learning',
  'catalog-table' = 'learner_sessions'
);
INSERT INTO learner_sessions
SELECT learner_id, window_start, window_end, COUNT(*), COUNT(DISTINCT lesson_id)
FROM TABLE(
  SESSION(TABLE progress PARTITION BY learner_id, DESCRIPTOR(event_time), INTERVAL '10' MINUTES)
)
GROUP BY learner_id, window_start, window_end;
