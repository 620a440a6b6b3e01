// Package sample reads a bounded sample of a topic's records, for the hot
// keys view: which keys a Flink job's Kafka source sees most.
//
// A sample is one [Request]: a topic, optionally some of its partitions,
// and a mode:
//
//   - "last": the last LastN records of each partition, from
//     max(log start, end−LastN) to the end offsets listed when the sample
//     starts, so it ends even while producers write;
//   - "live": the records produced during the next Window, from the end
//     offsets listed when the sample starts.
//
// [Limits] bound every sample (records, bytes, time, and the largest record
// delivered; larger ones are counted as skipped), with defaults and hard
// caps. Run one with [Sample]:
//
//	p, err := sample.Sample(ctx, cfg, sample.Request{
//		Topic: "clicks", Mode: sample.ModeLast, LastN: 10_000,
//	}, func(r sample.Record) { counts[string(r.Key)]++ }, nil)
//
// or through a [Manager], the one record of a dashboard's samples: it runs
// a few at a time in the background ([DefaultConcurrent]), each under an
// id of 16 hex digits with a value of the caller's (what its records add
// up to), keeps the last [Kept] of them, and tells of every progress
// (ManagerOptions.OnProgress, or one sample's [Manager.Subscribe]), so a
// web handler can start one, push its [Progress] to a page, cancel it and
// read its outcome later.
//
// The sampler only reads. It uses a client of its own per sample, built
// from the collectors' [kafka.Config] (brokers, TLS, SASL), lists the
// offsets with ListOffsets and consumes the partitions directly from exact
// offsets: no group join, no offset commit, no produce. The client's fetch
// sizes are bounded, so one huge record or batch cannot take the
// dashboard's memory.
package sample
