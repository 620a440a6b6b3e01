// Package collectors is where skewscope's live collectors (the Flink REST
// and Kafka readers that feed the dashboard) will live; they are built in a
// later issue. For now it holds their test data: testdata/flink/<version>/
// has real Flink REST responses recorded by the end-to-end tier
// (e2e/record_test.go, SKEWSCOPE_RECORD=1) from a MiniCluster running the
// skewscope test job, one pretty-printed JSON file per endpoint plus a
// manifest.json naming each file's request path and status, with only
// host-specific values scrubbed; recordings_test.go checks them against
// Flink's OpenAPI specs and lists where the wire differs from the spec.
package collectors
