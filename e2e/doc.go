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
// repository lacks something), then, for each Flink line (1.20 and 2.2, or
// those named in SKEWSCOPE_E2E_LINES, e.g. "2.2"), start the broker
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
// FLINK_VERSION and REST_URL. Both stop cleanly on the stdin line "quit"
// or when stdin closes. The Flink program also reads one command per stdin
// line and answers each with one line, "OK ..." or "ERR message";
// arguments are key=value words with URL-query-escaped values:
//
//	submit name=N topics=T1,T2 out=TOPIC group=G sourceP=N keyedP=N [maxP=N] [savepoint=PATH] [checkpointMs=N]
//	  -> OK jobId=<32 hex>
//	cancel jobId=ID -> OK
//	ping -> OK
//
// Stopping with a savepoint goes through REST (POST /jobs/:jobid/stop), as
// an operator would do it; the restored job is another submit with
// savepoint= and the same job name.
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
package e2e
