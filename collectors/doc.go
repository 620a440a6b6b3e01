// Package collectors holds skewscope's live collectors, one package each:
// collectors/flink polls a Flink REST endpoint, collectors/kafka a Kafka
// cluster; both feed the live store.
//
// This package itself holds what the two share: [FieldErrors], the problems
// their Config.Validate methods report, each at its key in the
// configuration file (docs/configuration.md); and their test data:
// testdata/flink/<version>/ has real Flink REST responses recorded by the
// end-to-end tier (e2e/record_test.go, SKEWSCOPE_RECORD=1) from a
// MiniCluster running the skewscope test job, one pretty-printed JSON file
// per endpoint plus a manifest.json naming each file's request path and
// status, with only host-specific values scrubbed; recordings_test.go checks
// them against Flink's OpenAPI specs (testdata/flink-rest/) and lists where
// the wire differs from the spec.
package collectors
