// Package kafka polls one Kafka cluster in the background and publishes
// immutable [Snapshot]s of its watched topics and of the consumer groups
// that commit on them.
//
// Build a [Config] (brokers, client id, TLS, SASL, group filters), check it
// with [Config.Validate], then:
//
//	col, err := kafka.NewKafkaCollector(cfg, logger)
//	defer col.Close()
//	col.OnSnapshot(publish)  // called with every snapshot, from the poll
//	go col.Run(ctx)          // polls now, then every PollInterval
//
// SASL: PLAIN and SCRAM-SHA-256/512 take a password or a password file;
// OAUTHBEARER takes a static token, a token file, or an OAuth 2.0
// client-credentials grant ([OAuthConfig]: token endpoint, client id, client
// secret or secret file, scope). Files are re-read on every authentication
// (or token request), so rotated secrets are picked up on the next
// connection; client-credentials tokens are cached until shortly before
// expires_in. Secrets never appear in errors. When the broker sets a
// session lifetime (connections.max.reauth.ms, KIP-368), kgo re-authenticates
// before it ends, which asks for the token again.
//
// Config.Groups keeps only the consumer groups whose names pass its Allow
// and Deny regular expressions; filtered-out groups are never fetched.
//
// Each poll sends only reads: one ListOffsets per partition leader for the
// end offsets, ListGroups (one per broker) and OffsetFetch for all listed
// groups at once through kadm's FetchManyOffsets (one request per group
// coordinator with OffsetFetch v8+, never one per group); the offsets and
// the group reads run at the same time. Metadata (topics, partitions) and
// the log start offsets change rarely and are re-read once a minute, or on
// the next poll after an unknown-topic or not-leader error, except that the
// partitions of the topics running sources read (Collector.Follow) are
// read on every poll, past kgo's metadata cache; the log starts
// as often as Config.LogStartRefresh says (a reader behind the log start
// shows only until its client skips to it). Groups are
// kept when they have a commit on a watched topic, so Flink's member-less
// groups (state Empty, no protocol type) are included. Watched topics are
// Config.Topics, or every non-internal topic (a new topic appears within a
// minute).
//
// Partial failure is normal. Every partition and group carries its own Err
// and a [Freshness]: when a request fails, the last good value is kept,
// marked Stale, with its Age. Snapshot.Err summarises the steps that failed.
// Failures are logged at warn level once per kind per poll (the topic list,
// a topic, a partition's end or start offset, the group list, a group's
// commits): 10,000 failing partitions make one line with count=10000 and
// the first three as examples.
//
// The pure calculators, [Rate], [Lag] and [TimeTable] (lag in seconds by
// interpolating per-partition (time, end offset) samples; its doc comment
// describes the method and its limits), do no I/O and can be reused on
// cached inputs.
//
// Not yet supported: SASL GSSAPI and AWS_MSK_IAM, OAUTHBEARER SASL
// extensions, lag against the last stable offset for transactional topics,
// and exact time lag from record timestamps.
package kafka
