package kafka

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"runtime/debug"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/skewscope/skewscope/internal/polllog"
)

// groupBatchSize bounds the number of groups in one FetchManyOffsets call;
// kgo still sends one OffsetFetch per coordinator per call (OffsetFetch v8+).
const groupBatchSize = 500

// Snapshot is the result of one poll. It is immutable once published:
// readers must not modify it or its slices.
type Snapshot struct {
	Cluster      string
	CollectedAt  time.Time     // CollectedAt is when the poll started.
	PollDuration time.Duration // PollDuration is how long the poll took.
	// Err is set when a whole step failed (listing topics or groups); the
	// items it would have refreshed keep their last good values, marked stale.
	Err error
	// MetadataAt is when the topic list and partitions this snapshot
	// shows were read (the metadata is re-read once a minute, or at once
	// on HintMetadata); zero before any read succeeded. The partitions of
	// a followed topic are read more often: see Topic.ReadAt.
	MetadataAt time.Time
	Topics     []Topic // sorted by name
	Groups     []Group // sorted by name; only groups with commits on a watched topic
}

// Freshness says whether a value is from this poll or an older one.
type Freshness struct {
	UpdatedAt time.Time     // UpdatedAt is the poll that last refreshed the value.
	Stale     bool          // Stale is true when this poll failed to refresh it.
	Age       time.Duration // Age is CollectedAt − UpdatedAt.
}

// Topic is one watched topic.
type Topic struct {
	Name       string
	Err        error       // Err is the topic-level error of this poll (e.g. unknown topic).
	Partitions []Partition // sorted by partition
	// ReadAt is when a broker last answered for this topic's partitions:
	// MetadataAt, or a later poll for a topic the collector follows
	// (Collector.Follow). A partition absent from Partitions did not
	// exist at ReadAt. Zero when the topic's partitions were never read.
	ReadAt time.Time
	// Retention is the topic's retention settings, re-read once a minute.
	Retention Retention
}

// Partition holds one partition's offsets and its produce rate.
type Partition struct {
	Partition int32
	Start     int64 // Start is the log start offset.
	End       int64 // End is the high watermark.
	// Rate is records/s from the end-offset delta since the previous good
	// sample; RateOK is false when none could be computed.
	Rate   float64
	RateOK bool
	Err    error
	Freshness
}

// Group is a consumer group with commits on watched topics; Flink's
// member-less groups (state Empty, no protocol) are included.
type Group struct {
	Name         string
	State        string
	ProtocolType string
	Err          error
	Freshness
	Partitions []GroupPartition // sorted by topic, partition
}

// GroupPartition is a group's committed offset on one partition and its lag.
type GroupPartition struct {
	Topic     string
	Partition int32
	Committed int64 // Committed is the next offset the group will read.
	// Lag is End − Committed clamped at 0, against the partition's latest
	// known end offset; -1 when that end offset is unknown.
	Lag int64
	// LagSeconds is estimated from the partition's [TimeTable]; LagKind says
	// how (unknown, caught-up, interpolated or a lower bound).
	LagSeconds float64
	LagKind    TimeLagKind
	Err        error
}

// Collector polls one Kafka cluster in the background and publishes
// snapshots. It only reads: Metadata, ListOffsets, ListGroups,
// FindCoordinator, OffsetFetch and DescribeConfigs.
type Collector struct {
	cfg    Config
	log    *slog.Logger
	cl     *kgo.Client
	adm    *kadm.Client
	now    func() time.Time
	filter groupMatcher
	latest atomic.Pointer[Snapshot]
	// notify, when set, receives every published snapshot.
	notify atomic.Pointer[func(*Snapshot)]

	mu     sync.Mutex // serialises polls and guards the state below
	parts  map[tp]*partState
	groups map[string]Group
	topics map[string]Topic
	// meta holds the watched topics and their partitions from the last
	// good Metadata; metaAt is when it was read, metaStale forces a refresh.
	meta      map[string][]int32
	metaErr   map[string]error // metaErr holds topic errors (e.g. unknown topic).
	metaAt    time.Time
	metaStale bool
	// readAt holds, per topic in meta, when a broker last answered for
	// its partitions (metaAt, or a later read of a followed topic).
	readAt map[string]time.Time
	// followed names the topics whose partitions are read on every poll
	// (Follow); guarded by followMu, not mu, so that the store may set it
	// from a snapshot callback.
	followMu sync.Mutex
	followed []string
	// startsAt is when the log start offsets were last asked for.
	startsAt time.Time
	// retention holds each watched topic's retention settings, read at
	// retentionAt for the topic set retentionNames.
	retention      map[string]Retention
	retentionAt    time.Time
	retentionNames []string
	// hinted is set by HintMetadata; hintAt is when a hint last forced a
	// metadata read, hints the forced reads that found the metadata
	// unchanged since.
	hinted atomic.Bool
	hintAt time.Time
	hints  int
}

// metadataRefresh is how often the topic list, the partitions and (unless
// Config.LogStartRefresh says otherwise) the log start offsets are re-read.
// They change rarely (topic creation, retention); end offsets and commits
// are read on every poll. An unknown-topic or leadership error forces a
// refresh on the next poll.
const metadataRefresh = time.Minute

type tp struct {
	topic     string
	partition int32
}

type partState struct {
	last  Partition // last good value
	table *TimeTable
}

// NewKafkaCollector validates cfg and creates the client. No request is
// sent until the first poll. Call Close when done.
func NewKafkaCollector(cfg Config, logger *slog.Logger) (*Collector, error) {
	return newCollector(cfg, logger)
}

func newCollector(cfg Config, logger *slog.Logger, extra ...kgo.Opt) (*Collector, error) {
	cfg = cfg.WithDefaults()
	opts, err := cfg.ClientOptions()
	if err != nil {
		return nil, err
	}
	cl, err := kgo.NewClient(append(opts, extra...)...)
	if err != nil {
		return nil, fmt.Errorf("kafka cluster %q: %w", cfg.Name, err)
	}
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	filter, err := cfg.Groups.compile()
	if err != nil {
		cl.Close()
		return nil, fmt.Errorf("kafka cluster %q: groups: %w", cfg.Name, err)
	}
	adm := kadm.NewClient(cl)
	adm.SetTimeoutMillis(int32(cfg.RequestTimeout.Milliseconds()))
	return &Collector{
		cfg:    cfg,
		log:    logger.With("cluster", cfg.Name),
		cl:     cl,
		adm:    adm,
		now:    time.Now,
		filter: filter,
		parts:  map[tp]*partState{},
		groups: map[string]Group{},
		topics: map[string]Topic{},
	}, nil
}

// Close closes the Kafka client.
func (c *Collector) Close() { c.cl.Close() }

// Run polls immediately, then every PollInterval after the previous poll
// ends, until ctx is done. Polls never overlap.
func (c *Collector) Run(ctx context.Context) {
	t := time.NewTimer(0)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		c.pollRecovering(ctx)
		t.Reset(c.cfg.PollInterval)
	}
}

// PollOnce runs one poll, bounded by RequestTimeout, publishes its snapshot
// and returns it. Its failures are logged once per kind (a step, a topic,
// a partition's offsets, a group), each with the count and a few examples
// when repeated.
func (c *Collector) PollOnce(ctx context.Context) *Snapshot {
	c.mu.Lock()
	defer c.mu.Unlock()
	now := c.now()
	pl := polllog.New(c.log.Handler())
	defer pl.Flush(context.WithoutCancel(ctx))
	log := pl.Logger()
	ctx, cancel := context.WithTimeout(ctx, c.cfg.RequestTimeout)
	defer cancel()

	s := &Snapshot{Cluster: c.cfg.Name, CollectedAt: now}
	var errs []error

	refresh := c.meta == nil || c.metaStale || now.Sub(c.metaAt) >= metadataRefresh || now.Before(c.metaAt)
	forced := false
	if refresh {
		c.hinted.Store(false) // this read answers it
	} else {
		forced = c.takeHint(now)
	}
	if refresh || forced {
		refresh = true
		before := c.meta
		mctx := ctx
		if forced {
			// kadm answers from kgo's metadata cache (up to MetadataMinAge,
			// 5 s, old) unless authorized operations are asked for: a
			// forced read goes to a broker, past the cache.
			mctx = kadm.WithAuthorizedOps(ctx)
		}
		if err := c.refreshMetadata(mctx, now); err != nil {
			log.Warn("kafka topic list failed; keeping the last topics", "error", err)
			errs = append(errs, fmt.Errorf("list topics: %w", err))
			refresh = false
		} else {
			c.countHint(before, forced)
		}
	}
	if !refresh {
		if err := c.refreshFollowed(ctx, now); err != nil {
			log.Warn("kafka metadata of the followed topics failed; keeping their last partitions", "error", err)
			errs = append(errs, fmt.Errorf("read followed topics: %w", err))
		}
	}
	names := slices.Sorted(maps.Keys(c.meta))
	if c.meta == nil {
		names = slices.Sorted(maps.Keys(c.topics))
	}

	// Offsets and group commits are independent reads: send them at once.
	var gf groupFetch
	var wg sync.WaitGroup
	wg.Go(func() {
		defer func() {
			if r := recover(); r != nil {
				gf = groupFetch{listErr: c.recovered("group fetch", r)}
			}
		}()
		gf = c.fetchGroups(ctx)
	})
	var retErr error
	wg.Go(func() {
		defer func() {
			if r := recover(); r != nil {
				retErr = c.recovered("topic configs", r)
			}
		}()
		retErr = c.refreshRetention(ctx, now, names)
	})
	withStarts := refresh || c.startsAt.IsZero() || now.Sub(c.startsAt) >= c.cfg.LogStartRefresh || now.Before(c.startsAt)
	if withStarts {
		c.startsAt = now
	}
	ends, starts, err := c.listOffsets(ctx, names, withStarts)
	wg.Wait()

	s.Topics, err = c.pollOffsets(log, now, names, ends, starts, err)
	if err != nil {
		errs = append(errs, err)
	}
	if retErr != nil {
		log.Warn("kafka topic configs failed; keeping the last retention settings, stale", "error", retErr)
		errs = append(errs, fmt.Errorf("describe topic configs: %w", retErr))
	}
	for i := range s.Topics {
		s.Topics[i].Retention = c.retention[s.Topics[i].Name]
	}
	s.Groups, err = c.pollGroups(log, now, names, gf)
	if err != nil {
		errs = append(errs, err)
	}
	s.Err = errors.Join(errs...)
	if c.meta != nil {
		s.MetadataAt = c.metaAt
	}
	s.PollDuration = c.now().Sub(now)
	c.latest.Store(s)
	if fn := c.notify.Load(); fn != nil {
		c.publish(*fn, s)
	}
	return s
}

// pollRecovering is PollOnce with a panic turned into a failed poll: the
// last snapshot's values are kept with the panic as Err, and Run goes on.
func (c *Collector) pollRecovering(ctx context.Context) (s *Snapshot) {
	defer func() {
		if r := recover(); r != nil {
			err := c.recovered("poll", r)
			s = &Snapshot{Cluster: c.cfg.Name, CollectedAt: c.now()}
			if prev := c.latest.Load(); prev != nil {
				cp := *prev
				s = &cp
			}
			s.Err = err
			c.latest.Store(s)
		}
	}()
	return c.PollOnce(ctx)
}

// publish hands s to fn (the store update), recovering a panic in it so
// that polling goes on.
func (c *Collector) publish(fn func(*Snapshot), s *Snapshot) {
	defer func() {
		if r := recover(); r != nil {
			c.recovered("snapshot update", r)
		}
	}()
	fn(s)
}

// recovered logs a recovered panic once, with the stack, and returns it as
// an error.
func (c *Collector) recovered(what string, r any) error {
	c.log.Error("kafka collector panicked; recovered", "in", what, "error", r, "stack", string(debug.Stack()))
	return fmt.Errorf("internal error: panic: %v", r)
}

// OnSnapshot sets a function that receives every snapshot the collector
// publishes, on the polling goroutine. It must not modify the snapshot.
func (c *Collector) OnSnapshot(fn func(*Snapshot)) { c.notify.Store(&fn) }

// A metadata hint is honoured at most once per PollInterval, and at most
// maxHints times between two regular reads while the metadata it reads
// stays the same (Flink may name a topic this cluster does not watch).
const maxHints = 5

// HintMetadata tells the collector that Flink names partitions (or topics)
// that its last metadata does not have: a topic may have grown, or been
// created, since the metadata was read. The next poll reads the metadata
// again instead of waiting for the minute to pass (bounded, see maxHints).
// Safe for concurrent use, also from the snapshot callback.
func (c *Collector) HintMetadata() { c.hinted.Store(true) }

// takeHint reports whether a hint forces a metadata read at now. Called
// with c.mu held.
func (c *Collector) takeHint(now time.Time) bool {
	if !c.hinted.Swap(false) || c.hints >= maxHints {
		return false
	}
	if !c.hintAt.IsZero() && now.Sub(c.hintAt) < c.cfg.PollInterval && !now.Before(c.hintAt) {
		c.hinted.Store(true) // honoured on a later poll
		return false
	}
	c.hintAt = now
	return true
}

// countHint counts a forced read that found the same partitions as before;
// a read that found a change, and the regular read once a minute, start
// the count over. Called with c.mu held.
func (c *Collector) countHint(before map[string][]int32, forced bool) {
	same := len(before) == len(c.meta)
	for name, ps := range c.meta {
		if !same {
			break
		}
		old, ok := before[name]
		same = ok && slices.Equal(old, ps)
	}
	switch {
	case !same || !forced:
		c.hints = 0
	default:
		c.hints++
	}
}

// refreshMetadata reads the watched topics and their partitions.
func (c *Collector) refreshMetadata(ctx context.Context, now time.Time) error {
	td, err := c.adm.ListTopics(ctx, c.cfg.Topics...) // all non-internal topics when none configured
	if err != nil {
		return err
	}
	meta := map[string][]int32{}
	metaErr := map[string]error{}
	for _, name := range c.cfg.Topics {
		if _, ok := td[name]; !ok {
			metaErr[name] = fmt.Errorf("topic %q: not in metadata", name)
			meta[name] = nil
		}
	}
	for name, d := range td {
		meta[name] = d.Partitions.Numbers()
		if d.Err != nil {
			metaErr[name] = d.Err
		}
	}
	readAt := make(map[string]time.Time, len(meta))
	for name := range meta {
		readAt[name] = now
	}
	c.meta, c.metaErr, c.metaAt, c.metaStale, c.readAt = meta, metaErr, now, false, readAt
	return nil
}

// maxFollowed bounds the topics read on every poll (Follow).
const maxFollowed = 1000

// Follow names the topics whose partitions the collector reads on every
// poll, not only once a minute: the topics that running sources read, so
// that a topic's growth (or a new topic a new job reads) is in the next
// snapshot, not up to a minute later. Kafka's metadata is the only
// evidence of a partition that no reader has been given yet. Names the
// collector does not watch are left out; at most 1,000 are kept. Safe for
// concurrent use, also from the snapshot callback.
func (c *Collector) Follow(topics []string) {
	names := slices.Clone(topics)
	slices.Sort(names)
	names = slices.Compact(names)
	if len(c.cfg.Topics) > 0 {
		names = slices.DeleteFunc(names, func(n string) bool { return !slices.Contains(c.cfg.Topics, n) })
	}
	if len(names) > maxFollowed {
		names = names[:maxFollowed]
	}
	c.followMu.Lock()
	c.followed = names
	c.followMu.Unlock()
}

// refreshFollowed reads the partitions of the followed topics from a
// broker (past kgo's metadata cache) and merges them into the metadata.
// A followed topic the metadata does not have yet is added when the
// broker knows it; an error on one keeps its last partitions. Called
// with c.mu held, on a poll that did not read the whole metadata.
func (c *Collector) refreshFollowed(ctx context.Context, now time.Time) error {
	c.followMu.Lock()
	names := c.followed
	c.followMu.Unlock()
	if len(names) == 0 || c.meta == nil {
		return nil
	}
	td, err := c.adm.ListTopics(kadm.WithAuthorizedOps(ctx), names...)
	if err != nil {
		return err
	}
	for _, name := range names {
		d, ok := td[name]
		_, known := c.meta[name]
		switch {
		case !ok || d.IsInternal:
			continue
		case d.Err != nil || len(d.Partitions) == 0:
			if known && errors.Is(d.Err, kerr.UnknownTopicOrPartition) {
				// Deleted since the last read.
				c.meta[name], c.metaErr[name], c.readAt[name] = nil, d.Err, now
			}
			continue
		}
		if !known && len(c.cfg.Topics) > 0 {
			continue
		}
		c.meta[name], c.readAt[name] = d.Partitions.Numbers(), now
		delete(c.metaErr, name)
	}
	return nil
}

// offsetResult is one partition's offset from a ListOffsets response.
type offsetResult struct {
	offset int64
	err    error
}

// listOffsets sends one ListOffsets request per partition leader for the
// end offsets of every partition of names, and as many again for the log
// start offsets when withStarts is set; the two fan-outs run at once. kgo
// splits the request by leader from its metadata cache. A failed shard
// sets the error of each of its partitions.
func (c *Collector) listOffsets(ctx context.Context, names []string, withStarts bool) (ends, starts map[tp]offsetResult, err error) {
	if len(names) == 0 {
		return nil, nil, nil
	}
	var startErr error
	var startStale bool
	var wg sync.WaitGroup
	if withStarts {
		wg.Go(func() {
			defer func() {
				if r := recover(); r != nil {
					starts, startStale, startErr = nil, true, c.recovered("start offsets", r)
				}
			}()
			starts, startStale, startErr = c.listOffsetsAt(ctx, names, -2)
		})
	}
	ends, endStale, endErr := c.listOffsetsAt(ctx, names, -1)
	wg.Wait()
	if startStale || endStale {
		c.metaStale = true
	}
	var errs []error
	if endErr != nil {
		errs = append(errs, fmt.Errorf("list end offsets: %w", endErr))
	}
	if startErr != nil {
		errs = append(errs, fmt.Errorf("list start offsets: %w", startErr))
	}
	return ends, starts, errors.Join(errs...)
}

// listOffsetsAt lists the offsets at timestamp (-1 end, -2 start); stale
// reports a partition error that calls for fresh metadata.
func (c *Collector) listOffsetsAt(ctx context.Context, names []string, timestamp int64) (out map[tp]offsetResult, stale bool, err error) {
	req := kmsg.NewPtrListOffsetsRequest()
	req.ReplicaID = -1
	n := 0
	for _, name := range names {
		ps := c.meta[name]
		if len(ps) == 0 {
			continue
		}
		rt := kmsg.NewListOffsetsRequestTopic()
		rt.Topic = name
		rt.Partitions = make([]kmsg.ListOffsetsRequestTopicPartition, len(ps))
		for i, p := range ps {
			rp := &rt.Partitions[i]
			rp.Default()
			rp.Partition, rp.Timestamp, rp.CurrentLeaderEpoch = p, timestamp, -1
		}
		n += len(ps)
		req.Topics = append(req.Topics, rt)
	}
	out = make(map[tp]offsetResult, n)
	var errs []error
	for _, sh := range c.cl.RequestSharded(ctx, req) {
		if sh.Err != nil {
			errs = append(errs, sh.Err)
			if r, ok := sh.Req.(*kmsg.ListOffsetsRequest); ok {
				for _, t := range r.Topics {
					for _, p := range t.Partitions {
						out[tp{t.Topic, p.Partition}] = offsetResult{err: sh.Err}
					}
				}
			}
			continue
		}
		resp := sh.Resp.(*kmsg.ListOffsetsResponse)
		for _, t := range resp.Topics {
			for _, p := range t.Partitions {
				r := offsetResult{offset: p.Offset, err: kerr.ErrorForCode(p.ErrorCode)}
				if r.err != nil && (errors.Is(r.err, kerr.UnknownTopicOrPartition) || errors.Is(r.err, kerr.NotLeaderForPartition)) {
					stale = true
				}
				out[tp{t.Topic, p.Partition}] = r
			}
		}
	}
	return out, stale, errors.Join(errs...)
}

// pollOffsets updates the per-partition state from the listed offsets
// (starts is nil when log start offsets were not re-read this poll) and
// returns the topics for the snapshot. listErr is the error of the listing.
// Failures go to log, the poll's.
func (c *Collector) pollOffsets(log *slog.Logger, now time.Time, names []string, ends, starts map[tp]offsetResult, listErr error) ([]Topic, error) {
	if len(names) == 0 {
		c.topics = map[string]Topic{}
		return nil, listErr
	}
	topics := make([]Topic, 0, len(names))
	for _, name := range names {
		t := Topic{Name: name, Err: c.metaErr[name], ReadAt: c.readAt[name]}
		ps, known := c.meta[name]
		if !known {
			// No metadata yet: the partitions of the last good poll.
			for _, p := range c.topics[name].Partitions {
				ps = append(ps, p.Partition)
			}
		}
		t.Partitions = make([]Partition, 0, len(ps))
		for _, p := range ps {
			end, ok := ends[tp{name, p}]
			if !ok {
				end.err = cmp.Or(listErr, errors.New("no offset returned"))
			}
			var start *offsetResult
			if starts != nil {
				st, ok := starts[tp{name, p}]
				if !ok {
					st.err = cmp.Or(listErr, errors.New("no offset returned"))
				}
				start = &st
				if st.err != nil {
					log.Warn("kafka log start offset failed; keeping the last one", "topic", name, "partition", p, "error", st.err)
				}
			}
			if end.err != nil {
				log.Warn("kafka end offset failed; keeping the last values, stale", "topic", name, "partition", p, "error", end.err)
			}
			t.Partitions = append(t.Partitions, c.updatePartition(now, name, p, end, start))
		}
		if len(t.Partitions) == 0 && t.Err == nil {
			t.Err = cmp.Or(listErr, fmt.Errorf("topic %q: no partitions (unknown topic?)", name))
		}
		if t.Err != nil {
			log.Warn("kafka topic unavailable", "topic", name, "error", t.Err)
		}
		slices.SortFunc(t.Partitions, func(a, b Partition) int { return cmp.Compare(a.Partition, b.Partition) })
		topics = append(topics, t)
	}
	// Forget the state of partitions no longer watched or gone.
	next := make(map[string]Topic, len(topics))
	for _, t := range topics {
		next[t.Name] = t
	}
	for name, old := range c.topics {
		nt, ok := next[name]
		for _, p := range old.Partitions {
			if _, found := slices.BinarySearchFunc(nt.Partitions, p.Partition, func(q Partition, n int32) int { return cmp.Compare(q.Partition, n) }); !ok || !found {
				delete(c.parts, tp{name, p.Partition})
			}
		}
	}
	c.topics = next
	return topics, listErr
}

func markStale(last Partition, now time.Time, err error) Partition {
	last.Err = err
	last.Stale = true
	last.Age = now.Sub(last.UpdatedAt)
	return last
}

func (c *Collector) updatePartition(now time.Time, topic string, p int32, end offsetResult, start *offsetResult) Partition {
	k := tp{topic, p}
	ps := c.parts[k]
	if end.err != nil {
		if ps == nil {
			return Partition{Partition: p, Start: -1, End: -1, Err: end.err, Freshness: Freshness{Stale: true}}
		}
		return markStale(ps.last, now, end.err)
	}
	if ps == nil {
		ps = &partState{table: NewTimeTable(c.cfg.TimeTableSize)}
		c.parts[k] = ps
	}
	np := Partition{Partition: p, End: end.offset, Start: ps.last.Start, Freshness: Freshness{UpdatedAt: now}}
	switch {
	case start != nil && start.err == nil:
		np.Start = start.offset
	case start != nil:
		np.Err = fmt.Errorf("start offset: %w", start.err)
	case ps.last.UpdatedAt.IsZero():
		np.Start = -1 // not read yet
	}
	if !ps.last.UpdatedAt.IsZero() {
		np.Rate, np.RateOK = Rate(ps.last.End, ps.last.UpdatedAt, end.offset, now)
	}
	ps.table.Add(now, end.offset)
	ps.last = np
	return np
}

// groupFetch is the I/O half of a group poll.
type groupFetch struct {
	listed  kadm.ListedGroups
	names   []string // sorted, filtered
	fetched kadm.FetchOffsetsResponses
	listErr error
}

// fetchGroups lists the groups and fetches the commits of those passing
// the filter, in batches. It reads c.groups, which only the polling
// goroutine writes, after this returns.
func (c *Collector) fetchGroups(ctx context.Context) groupFetch {
	var gf groupFetch
	gf.listed, gf.listErr = c.adm.ListGroups(ctx)
	if len(gf.listed) == 0 && gf.listErr != nil {
		// Nothing listed: refresh the groups we already know.
		gf.listed = kadm.ListedGroups{}
		for name, g := range c.groups {
			gf.listed[name] = kadm.ListedGroup{Group: name, State: g.State, ProtocolType: g.ProtocolType}
		}
	}
	maps.DeleteFunc(gf.listed, func(name string, _ kadm.ListedGroup) bool { return !c.filter.keep(name) })
	gf.names = gf.listed.Groups() // sorted
	gf.fetched = kadm.FetchOffsetsResponses{}
	for batch := range slices.Chunk(gf.names, groupBatchSize) {
		maps.Copy(gf.fetched, c.adm.FetchManyOffsets(ctx, batch...))
	}
	return gf
}

// pollGroups computes the groups of the snapshot from gf and the
// partition state. Failures go to log, the poll's.
func (c *Collector) pollGroups(log *slog.Logger, now time.Time, topics []string, gf groupFetch) ([]Group, error) {
	watched := make(map[string]bool, len(topics))
	for _, t := range topics {
		watched[t] = true
	}
	var errs []error
	if gf.listErr != nil {
		log.Warn("kafka group list failed; reading the groups already known", "error", gf.listErr)
		errs = append(errs, fmt.Errorf("list groups: %w", gf.listErr))
	}
	listed, names, fetched := gf.listed, gf.names, gf.fetched

	next := map[string]Group{}
	nfail := 0
	for _, name := range names {
		lg := listed[name]
		f, ok := fetched[name]
		if !ok {
			f.Err = errors.New("no offset fetch response")
		}
		if f.Err != nil {
			log.Warn("kafka group offsets failed; keeping the last values, stale", "group", name, "error", f.Err)
			nfail++
			if prev, ok := c.groups[name]; ok {
				prev.Err = f.Err
				prev.Stale = true
				prev.Age = now.Sub(prev.UpdatedAt)
				c.refreshLag(&prev, now)
				next[name] = prev
			}
			continue
		}
		g := Group{Name: name, State: lg.State, ProtocolType: lg.ProtocolType, Freshness: Freshness{UpdatedAt: now}}
		for topic, ps := range f.Fetched {
			if !watched[topic] {
				continue
			}
			for p, o := range ps {
				if o.Err == nil && o.At < 0 {
					continue // no commit on this partition
				}
				if o.Err != nil {
					log.Warn("kafka group offset failed", "group", name, "topic", topic, "partition", p, "error", o.Err)
				}
				g.Partitions = append(g.Partitions, GroupPartition{Topic: topic, Partition: p, Committed: o.At, Err: o.Err})
			}
		}
		if len(g.Partitions) == 0 {
			continue
		}
		slices.SortFunc(g.Partitions, func(a, b GroupPartition) int {
			return cmp.Or(cmp.Compare(a.Topic, b.Topic), cmp.Compare(a.Partition, b.Partition))
		})
		c.refreshLag(&g, now)
		next[name] = g
	}
	if nfail > 0 {
		errs = append(errs, fmt.Errorf("fetch offsets: %d of %d groups failed", nfail, len(names)))
	}
	c.groups = next
	groups := slices.Collect(maps.Values(next))
	slices.SortFunc(groups, func(a, b Group) int { return cmp.Compare(a.Name, b.Name) })
	return groups, errors.Join(errs...)
}

// refreshLag recomputes the lag of g's partitions against the latest known
// end offsets; the Partitions slice is replaced, never modified in place,
// since earlier snapshots share it.
func (c *Collector) refreshLag(g *Group, now time.Time) {
	out := make([]GroupPartition, len(g.Partitions))
	for i, gp := range g.Partitions {
		gp.Lag, gp.LagSeconds, gp.LagKind = -1, 0, TimeLagUnknown
		if ps := c.parts[tp{gp.Topic, gp.Partition}]; ps != nil && gp.Err == nil && !ps.last.UpdatedAt.IsZero() {
			gp.Lag = Lag(ps.last.End, gp.Committed)
			gp.LagSeconds, gp.LagKind = ps.table.LagSeconds(gp.Committed, now)
		}
		out[i] = gp
	}
	g.Partitions = out
}
