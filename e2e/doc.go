// Package e2e is skewscope's ground-truth tier: it runs a real Apache Kafka
// broker (4.x, KRaft) and a real Flink MiniCluster with its REST endpoint,
// both from Maven Central jars, drives the test job in flinkjob/, and
// compares what Flink does with what package assign predicts.
//
// The tests carry the build tag e2e and need Java 17+ and Maven:
//
//	go test -tags e2e -count=1 -timeout 60m -v ./e2e/
//
// They build flinkjob/ with Maven (offline first, online if the local
// repository lacks something), then, for each Flink line (1.20, 2.2 and
// 2.3, or those named in SKEWSCOPE_E2E_LINES, e.g. "2.3"), start the broker
// (skewscope.e2e.KafkaBroker) and the MiniCluster (skewscope.e2e.FlinkE2E)
// as child JVMs on 127.0.0.1 with free ports, and stop them at the end.
// Extra Maven arguments (say -Dmaven.repo.local=DIR) come from
// SKEWSCOPE_E2E_MAVEN_ARGS. Logs live in a temp directory that is removed
// when the tests pass and kept, with their tails printed, when they fail.
//
// # Control protocol
//
// Both programs print KEY=VALUE lines on stdout once ready, then READY:
// the broker KAFKA_CLUSTER_ID and KAFKA_BOOTSTRAP, the Flink program
// FLINK_VERSION, REST_URL and SCHEDULER (its fourth argument, "default" or
// "adaptive"). Both stop cleanly on the stdin line "quit"
// or when stdin closes. The Flink program also reads one command per stdin
// line and answers each with one line, "OK ..." or "ERR message";
// arguments are key=value words with URL-query-escaped values:
//
//	submit name=N topics=T1,T2 out=TOPIC group=G sourceP=N keyedP=N [maxP=N] [savepoint=PATH] [checkpointMs=N]
//	       [watermarks=none|bounded] [boundMs=N] [idleMs=N] [alignGroup=G alignDriftMs=N [alignUpdateMs=N]]
//	  -> OK jobId=<32 hex>
//	submitSql name=N p=N [maxP=N] s0=STATEMENT s1=STATEMENT ...
//	  -> OK jobId=<32 hex>
//	cancel jobId=ID -> OK
//	ping -> OK
//
// submitSql plans Flink SQL statements (CREATE TABLE ..., then INSERT INTO
// ...) in a StreamTableEnvironment on the line's own planner (SqlJob.java),
// every operator at parallelism p, mini-batch off, and submits the job.
//
// The event-time words: watermarks=none (the default) keeps the job
// without watermarks; watermarks=bounded gives the source
// WatermarkStrategy.forBoundedOutOfOrderness(boundMs) over the Kafka
// record timestamp (the producer's CreateTime: no timestamp assigner, so
// Flink keeps the timestamp the Kafka source hands on), plus
// withIdleness(idleMs) when idleMs is above 0 and
// withWatermarkAlignment(alignGroup, alignDriftMs, alignUpdateMs) when
// alignGroup is given (alignUpdateMs 1000 by default). The watermark flows
// through the chained Source Tagger and the hash edge into Key Router (a
// KeyedProcessFunction), whose input watermark is the minimum over the
// source subtasks.
//
// Stopping with a savepoint goes through REST (POST /jobs/:jobid/stop), as
// an operator would do it; the restored job is another submit with
// savepoint= and the same job name.
//
// # The job's output
//
// Each output record's value is
// "subtask,parallelism,maxParallelism,count,hashCode,tag,sourceSubtask,sourceParallelism,topic,partition":
// the keyed subtask's view of the record, then which source subtask read it
// (a map chained to the source stamps its own subtask index) from which
// partition. Writing one record per partition and reading them back
// (groundTruth) gives the real owner of every partition without metrics.
// A record keyed "skewscope-e2e-fail-once" makes the source subtask that
// reads it throw, once (a marker file in the cluster's work directory), so
// the job fails over.
//
// # The job's life under the adaptive scheduler
//
// Each line also starts a second MiniCluster with jobmanager.scheduler:
// adaptive (lifecycle_test.go) for one job over 12 partitions: a fresh
// start at 4, in-place rescales to 6 and then 3 through PUT
// /jobs/:jobid/resource-requirements (the job keeps its id and restores
// from its latest checkpoint, taken at the previous parallelism), then one
// failover at 3. After every change the data-path owners must equal
// assign.Restore with History [4 6], then [4 6 3], and be unchanged by the
// failover. One collector poll per step (before the rescale, the first
// poll after it with no traffic since, after Flink's metrics refreshed,
// after traffic; the same around the failover) is recorded under
// collectors/testdata/flink/lifecycle/<flink-version>/ with
// SKEWSCOPE_RECORD=1, and checked against those recordings otherwise.
// The dashboard's checks of these steps wait behind
// lifecycleDashboardChecks.
//
// # Growth, then an in-place rescale
//
// growth_rescale_test.go starts one more adaptive MiniCluster per line
// and runs two jobs on it in turn: each at 3 over 4 partitions, followed
// by a dashboard from its fresh start; the topic grows to 6 and the job is
// rescaled in place to 2, about 3 s after the growth (after-discovery) or
// at once (at-once), within 10 s either way. The dashboard polls
// throughout (one Flink and one Kafka poll a second). Whether the new partitions were in the checkpoint the rescale
// restored or were discovered after it is Flink's timing; the data path
// says which, and must match one of the two restore models. No poll may
// call the layout exact with a partition the Flink or Kafka snapshot names
// missing, shown twice or under another subtask than its reader (the
// vertex JSON and the page's headline alike); drift is 0 when the data
// path matches the model; once traffic flows, every cell is settled from
// the third poll on.
//
// # The why panel's target through a restore
//
// why_target_test.go: a job at 3 over 6 partitions with whyhot-2 and
// whyhot-5 (one subtask at the fresh start) written 20 times as often as
// the others. The dashboard's "why is it hot?" line for that subtask must
// judge its rescale over the history [3]; the job is stopped with a
// savepoint and restored at the line's target, and the data path must
// read the two partitions on different subtasks (and equal
// assign.Restore). A line without a target must agree with assign.Restore
// up to the limit it judged.
//
// # The dashboard's own pages
//
// Each line also runs skewscope itself (dashboard_test.go): the real Kafka
// and Flink collectors poll the broker and the MiniCluster into one
// live.Store kept for the whole line, and web.NewServer serves it. In every
// fresh-start case and in the 4→6 restore (before the savepoint and after
// the restore, where the store has seen both jobs), while a little traffic
// flows, the vertex JSON and HTML page must show the observed layout equal
// to assign's prediction (mode "restore", history [4,6], after the
// restore; also with ?history=4), lags equal to end − (currentOffset+1)
// from the snapshots the store holds, and the consumer group found from
// its commits.
//
// # Event time
//
// eventtime_test.go runs four jobs with bounded out-of-orderness (1 s)
// watermarks over records whose timestamps the harness chooses (record n
// of partition p at firstTs(p) + n·100 ms, one per partition every
// 100 ms, 10 min behind the wall clock), two at a time: idle (4
// partitions, 4 readers, no idleness, partition 2 silent after the
// warm-up), idleness (the same with withIdleness(2 s)), starved (2
// partitions, 4 readers) and aligned (4 partitions, 2 readers,
// withWatermarkAlignment(group, 2 s, 1 s), partition 1's timestamps 5 min
// behind). Each has its own dashboard polling through a recording proxy:
// its watermarks, drifts and paused times must equal those in Flink's
// answers to the same poll, the job's watermark the keyed vertex's GET
// …/watermarks where it is frozen and the last timestamp read − 1 s − 1
// ms; the holder must be the silent partition on the subtask the data
// path names (cause idle), not the skipped one (idleness), the readers
// without a split (starved), the slow partition with the partitions
// alignment pauses (aligned). The waits count polls. At the end the
// responses Flink gives are recorded, with SKEWSCOPE_RECORD=1, under
// collectors/testdata/flink/eventtime/<flink-version>/<scenario>/
// (eventtime_record_test.go); without it they go to a temp directory and
// their format is compared with the committed ones (logged). About 20 s a
// line.
//
// # Flink SQL jobs
//
// sql_test.go runs three SQL jobs on each line's cluster, at parallelism
// 4, over json topics it writes with Zipf-skewed keys (30,000 events over
// 300 user ids, short and long, ASCII and not, the empty string; 200
// account ids with the BIGINT extremes; regions with json nulls and
// missing fields; about 400 user records): GROUP BY user_id (STRING),
// GROUP BY account_id, region (BIGINT, STRING) and events JOIN users ON
// user_id. Once the keyed vertex (GroupAggregate, Join) has received every
// record, its per-subtask numRecordsIn must equal the records per subtask
// that the dashboard's sampler predicts when each record's key row is
// written by assign.KeyRowEncoder (sqlKeyOf, one per job), exactly for the
// whole topics and within three standard errors for the last 10 % of each
// partition; a Java String hash of the same column must not. The job, its
// plan and the keyed vertex's detail and numRecordsIn are recorded under
// collectors/testdata/flink/sql/<flink-version>/<job>/ with
// SKEWSCOPE_RECORD=1, compared in format otherwise. Run alone:
//
//	go test -tags e2e -count=1 -run 'TestFlinkGroundTruth/flink-.*/sql' -v ./e2e/
//
// About 35 s a line on two otherwise idle cores, a third of it planning
// the first job (Calcite and the code generator warming up).
//
// # The golden vectors on every line
//
// golden_test.go runs the golden-vector generator (flinkjob/golden) on each
// line's classpath (Flink and its Kafka connector as Maven resolved them for
// the line's module) into a temp directory and compares the files byte for
// byte with assign/testdata/golden, naming the first differing file and
// line. About 1 s per line after the Maven build.
package e2e
