// Package sandbox runs skewscope's built-in demo: an in-process Kafka cluster
// with skewed, moving traffic and three simulated Flink jobs that really consume
// it, behind a simulated JobManager REST endpoint. `make run` starts it when no
// Kafka or Flink is configured, and the dashboard reads it with its ordinary
// Kafka and Flink collectors, so the sandbox has to look like the real thing on
// the wire.
//
// # What it simulates
//
// Kafka: a three-broker franz-go kfake cluster on loopback with these topics:
//
//   - orders (12 partitions): keyed by customer id or e-mail, Zipf-like
//     per-partition produce rates whose ranking drifts slowly, so two or three
//     partitions are hot at any time;
//   - clicks and pageviews (2 partitions each, about 65 records/s per
//     partition, ±10 %): names chosen so that Flink's
//     KafkaSource start index (assign.KafkaStartIndex) is the same for both at
//     parallelism 4 (and again at 6), so both topics land on the same two
//     subtasks and the other two idle (the multi-topic skew of FLIP-537);
//   - inventory.events (3 partitions, growing to 8, one more every 45 s): its
//     name contains a dot, which Flink's metric ids turn into an underscore;
//   - payments (6 partitions, about 30 records/s each): rows of a Flink SQL
//     table in the json format, {"user_id":"u-00042","region":"eu-west",
//     "amount":12.5,"ts":…}, with a null record key; the user ids are
//     Zipf-distributed.
//
// Old records are deleted with DeleteRecords two minutes after they were
// written (Options.Retention, which every topic also carries as its
// retention.ms, cleanup.policy delete, so DescribeConfigs reports it as a
// broker would), so memory stays bounded however long the
// sandbox runs; the hot orders subtask, which falls behind, reaches that
// age after a few minutes, and Kafka deletes records it has not read: the
// dashboard shows them as lost. kfake
// keeps each partition's log in in-memory segment files and DeleteRecords
// frees only whole segments, so the brokers run with a small
// log.segment.bytes (256 KiB instead of 100 MiB); with the default no
// segment ever filled and nothing was freed.
//
// Flink: three streaming jobs, each a source vertex and a keyed vertex at
// maxParallelism 128. Two are DataStream jobs keyed by the record's Kafka key
// (a Java String): "orders-enrichment" (orders + inventory.events → keyBy →
// "Enrich Orders") and "clickstream-sessions" (clicks + pageviews → keyBy →
// "Sessionize"), each with a source vertex "Source: Kafka Source". The third,
// "payments-by-user" (sql.go), is a Flink SQL job,
// INSERT INTO user_totals SELECT user_id, COUNT(*), SUM(amount) FROM payments
// GROUP BY user_id, with its vertices named and described as Flink 2.2.1's
// planner writes them ("Source: payments[1] -> Calc[2]" and
// "GroupAggregate[4] -> user_totals[5]: Writer", the plan's operator trees
// recorded in testdata/sql-payments-2.2.1.json): it keys each record by the
// user_id of its value, a key row (assign.KeyRowEncoder) whose
// BinaryRowData.hashCode picks the key group, so its hot keyed subtask is
// another than a Java String hash of the same ids would make hot. Every
// source subtask is a kgo client that
// consumes its partitions directly (no group membership, like KafkaSource),
// with ownership from assign.KafkaSplitOwner on a fresh start and for
// partitions found by periodic discovery. Subtasks process at a fixed capacity
// (records/s) so hot subtasks fall behind; every record's key is routed
// through Flink's key-group formula to the keyed vertex, whose subtasks have a
// capacity too and backpressure the source when they are full. Checkpoints
// every 5 s commit the source offsets to the job's consumer group with
// OffsetCommit, as KafkaSource does on checkpoint completion. Restore does
// stop-with-savepoint: the old job ends FINISHED and a new job id resumes at
// the new parallelism from the savepoint's split lists, cut into contiguous
// chunks like Flink's operator list-state redistribution.
//
// Event time (eventtime.go): every record's timestamp is its produce time
// less up to 400 ms (a payments row's ts too), and every job uses a bounded
// out-of-orderness of 1 s on it, so each split's watermark is its highest timestamp read minus 1001
// ms, a source subtask's the lowest of its non-idle splits' and the keyed
// vertex's the lowest of its non-idle readers', never going back, as
// Flink's watermark multiplexer and valve do. orders-enrichment has no
// idle timeout: the orders partition SilentPartition stops receiving
// records Options.SilentAfter after the start (a minute by default) and,
// once the hot subtask has read past that instant, holds the job's
// watermark for good. clickstream-sessions has a 5 s idle timeout, which
// makes its two readers without a partition idle, so its watermark
// advances; payments-by-user has none (table.exec.source.idle-timeout's
// default) and needs none, every reader having a partition. The metric ids are those of the Flink 2.2.1 event-time
// recordings (collectors/testdata/flink/eventtime/2.2.1), the per-split
// gauges of FLIP-513 included.
//
// Metric values come from a metric store per job (fetcher.go), refreshed
// as Flink's MetricFetcher refreshes its store: on the job's details
// request once a second old, on any other metric request once 10 s old.
// The requests of one poll therefore read one instant, and the keyed
// watermark a poll reads is that of a source subtask and split it reads
// too.
//
// The JobManager is a fakejm.Cluster served by internal/fakejm's Handler,
// the fake the collector's benchmarks use too: it serves the REST endpoints
// skewscope reads with the shapes of recorded Flink 2.2.1 responses
// (collectors/testdata/flink/2.2.1): bare metric arrays with string values,
// metric ids written by Flink's rules (fakejm's names, not the collector's
// parser helpers), 404 {"errors":[...]} for unknown paths, GET only, and a
// 4096-byte request line limit like Netty's.
//
// # What it does not simulate
//
// No real operator code runs: records are counted, not transformed or written
// to a sink. The metric store is refreshed at once, where Flink's fetch
// lands a moment after the request that triggers it. Watermark alignment
// is not modelled. Only the endpoints skewscope uses exist (no
// job submission, savepoint triggers, flame graphs, task manager details or
// logs); the exception history is served, empty, as nothing fails. There is
// one simulated TaskManager. Failures,
// restarts, unaligned checkpoints and the Kafka consumer's own client metrics
// beyond a handful of names are not modelled.
package sandbox
