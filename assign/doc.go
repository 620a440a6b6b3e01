// Package assign reproduces, bit for bit, how Apache Flink assigns keys to key
// groups and subtasks, and how Flink's Kafka source assigns partitions to
// source subtasks. It also measures skew, diffs two parallelisms and ranks
// candidate parallelisms.
//
// Every exported formula names, in its doc comment, the Flink source it
// mirrors. All arithmetic that Java does in 32-bit int is done here in int32,
// so overflow, truncating division and remainder signs match the JVM.
//
// The package is pure: it imports only the standard library and does no I/O.
// Functions are safe for concurrent use; Size shares a large sweep with
// rates among up to GOMAXPROCS goroutines, with the same result as one loop.
//
// # Provenance
//
// The key-group functions mirror
// flink-runtime/src/main/java/org/apache/flink/runtime/state/KeyGroupRangeAssignment.java
// (blob 427925356387, identical in Flink 1.19, 1.20, 2.0, 2.1 and 2.2) and
// flink-core/src/main/java/org/apache/flink/util/MathUtils.java (blob a45eb0398969).
// The Kafka functions mirror KafkaSourceEnumerator.getSplitOwner in
// apache/flink-connector-kafka (identical in every release from v3.0.0 to
// v5.0.0) and RoundRobinOperatorStateRepartitioner in flink-runtime.
package assign
