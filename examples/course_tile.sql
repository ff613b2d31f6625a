-- The Flink lesson's course tile (docs/architecture.md, "Background"), as written there but
-- for the bootstrap servers, with the delivery guarantee chosen on purpose: exactly-once into
-- the output topic (a transaction per checkpoint; read it with isolation read_committed).
--   floe run examples/course_tile.sql --var KAFKA=host:port
SET 'execution.checkpointing.interval' = '2 s';
CREATE TABLE progress (
  event_id STRING,
  course_id STRING,
  lesson_id STRING,
  event_time TIMESTAMP(3),
  WATERMARK FOR event_time AS event_time - INTERVAL '10' MINUTE
) WITH (
  'connector' = 'kafka',
  'topic' = 'learning.progress',
  'properties.bootstrap.servers' = '${KAFKA}',
  'properties.group.id' = 'tlp-flink-course-tile',
  'scan.startup.mode' = 'group-offsets',
  'properties.auto.offset.reset' = 'earliest',
  'scan.watermark.idle-timeout' = '5 s',
  'format' = 'json',
  'json.timestamp-format.standard' = 'ISO-8601'
);
CREATE TABLE course_activity_tile (
  course_id STRING,
  window_start TIMESTAMP(3),
  window_end TIMESTAMP(3),
  event_count BIGINT
) WITH (
  'connector' = 'kafka',
  'topic' = 'course.activity.tile',
  'properties.bootstrap.servers' = '${KAFKA}',
  'format' = 'json',
  'sink.delivery-guarantee' = 'exactly-once',
  'sink.transactional-id-prefix' = 'course-tile',
  -- above checkpoint interval + checkpoint timeout (10 min) + restart delay, as floe checks
  'properties.transaction.timeout.ms' = '900000'
);
INSERT INTO course_activity_tile
SELECT
  course_id,
  window_start,
  window_end,
  COUNT(*) AS event_count
FROM TABLE(
  TUMBLE(TABLE progress, DESCRIPTOR(event_time), INTERVAL '5' MINUTES)
)
GROUP BY course_id, window_start, window_end;
