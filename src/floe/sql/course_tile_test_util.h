#pragma once

// Test-only: the course tile of the Flink lesson (docs/architecture.md, "Background"), as
// written there. Shared by parser_test.cc and planner_test.cc.

namespace floe::sql::testing {

inline constexpr const char* kCourseTile = R"sql(CREATE TABLE progress (
event_id STRING,
course_id STRING,
lesson_id STRING,
event_time TIMESTAMP(3),
WATERMARK FOR event_time AS event_time - INTERVAL '10' MINUTE
) WITH (
'connector' = 'kafka',
'topic' = 'learning.progress',
'properties.bootstrap.servers' = 'kafka:9092',
'properties.group.id' = 'tlp-flink-course-tile',
'scan.startup.mode' = 'group-offsets',
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
'properties.bootstrap.servers' = 'kafka:9092',
'format' = 'json'
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
)sql";

}  // namespace floe::sql::testing
