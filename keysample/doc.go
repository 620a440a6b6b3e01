// Package keysample turns sampled Kafka records into an answer to "which keys
// make which subtask hot, now and at any parallelism" for a keyed Flink
// operator. It is pure: records come in as bytes, figures go out, and it does
// no I/O.
//
// A KeySpec says how the job derives its key from a record (the record key or
// the value; a UTF-8 string, a big-endian int or long, a JSON field or a CSV
// column; typed for hashing like an assign.KeyType). KeySpec.Key extracts a
// Key: the text shown to users and the Java hashCode that Flink's keyBy
// hashes. A Summary counts the keys of a sample in bounded memory:
//
//	spec, err := keysample.ParseKeySpec("value", "json", "customer.id", "long")
//	s := keysample.NewSummary(1000, 128) // 1000 counters, max parallelism 128
//	for each sampled record {
//		k, err := spec.Key(recordKey, value)
//		if err != nil { s.AddError(err); continue }
//		s.Add(k)
//	}
//	top := s.Top(10)
//	layout, err := s.AtParallelism(6)
//	verdict := s.Verdict(6, 2, 24)
//
// # Flink SQL tables
//
// A SQL job keys its records by a row of key columns, not by a Java
// object. ParseSQLKeySpec takes the table's format, its columns and the key
// columns, and its KeySpec.Key reads a record as the table's format does,
// projects the key columns into Flink's BinaryRowData (assign.KeyRowEncoder)
// and hashes it as BinaryRowData.hashCode, which a Summary routes like any
// other key:
//
//	spec, err := keysample.ParseSQLKeySpec(keysample.SQLKeyOptions{
//		From: "value", Format: "json",
//		Columns: []keysample.SQLColumn{{"user_id", "BIGINT"}, {"region", "STRING"}, {"amount", "DECIMAL(10, 2)"}},
//		Key:     []string{"user_id", "region"},
//	})
//	k, err := spec.Key(recordKey, value) // k.Text `[42,"eu-1"]`
//
// The formats are Flink's json (its default JSON parser decoding), csv,
// raw, avro (the table's schema) and avro-confluent (a magic byte and
// schema id, the writer schema given or fetched from a registry by a
// SchemaSource such as franz-go's *sr.Client), each with the WITH options
// that change decoding. A record that cannot be read fails with a
// *SQLKeyError that names the column and keeps the value apart from its
// message, so that a Summary counts the records failing for one reason
// together (ErrorCount.Example holds the first value). Only the key
// columns are converted: a bad value in another column does not change
// where Flink routes the record.
//
// # What is exact and what is estimated
//
// Exact, bit for bit with Flink: each key's hash (Java's String, Integer,
// Long, TupleN hashCode, the JDK's replacement of malformed UTF-8 included),
// its key group (murmurHash(hash) % maxP) and its subtask at any parallelism
// (keyGroup * p / maxP). Because every record's key group is computed, the
// per-key-group record counts (KeyGroupCounts) and the per-subtask loads of
// AtParallelism are exact for the sample: they are what the job would have
// received for those records.
//
// Estimated: the per-key counts. The Summary keeps a fixed number of counters
// (Space-Saving, Metwally, Agrawal and El Abbadi, "Efficient Computation of
// Frequent and Top-k Elements in Data Streams", ICDT 2005), so a key's Count
// may overestimate its true count by at most its ErrorBound, and never
// underestimates it: true ≤ Count ≤ true + ErrorBound. Every key whose true
// count exceeds Records/capacity is in the summary. The number of distinct
// keys is exact while there are fewer than capacity, and beyond that a
// HyperLogLog estimate (2^14 registers, a standard error of 0.81%).
//
// A sample is only a sample: the exact figures are exact for the records
// read, and describe the stream as well as the sample represents it.
package keysample
