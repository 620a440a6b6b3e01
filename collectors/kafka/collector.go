package kafka

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
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
	Err    error
	Topics []Topic // sorted by name
	Groups []Group // sorted by name; only groups with commits on a watched topic
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
// FindCoordinator and OffsetFetch.
type Collector struct {
	cfg    Config
	log    *slog.Logger
	cl     *kgo.Client
	adm    *kadm.Client
	now    func() time.Time
	filter groupMatcher
	latest atomic.Pointer[Snapshot]

	mu     sync.Mutex // serialises polls and guards the state below
	parts  map[tp]*partState
	groups map[string]Group
	topics map[string]Topic
}

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

// Latest returns the latest snapshot, or nil before the first poll ends.
func (c *Collector) Latest() *Snapshot { return c.latest.Load() }

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
		s := c.PollOnce(ctx)
		if s.Err != nil {
			c.log.Warn("kafka poll incomplete", "error", s.Err, "duration", s.PollDuration)
		}
		t.Reset(c.cfg.PollInterval)
	}
}

// PollOnce runs one poll, bounded by RequestTimeout, publishes its snapshot
// and returns it.
func (c *Collector) PollOnce(ctx context.Context) *Snapshot {
	c.mu.Lock()
	defer c.mu.Unlock()
	now := c.now()
	ctx, cancel := context.WithTimeout(ctx, c.cfg.RequestTimeout)
	defer cancel()

	s := &Snapshot{Cluster: c.cfg.Name, CollectedAt: now}
	var errs []error

	names, err := c.watchedTopics(ctx)
	if err != nil {
		errs = append(errs, fmt.Errorf("list topics: %w", err))
		names = slices.Sorted(maps.Keys(c.topics))
	}
	s.Topics, err = c.pollOffsets(ctx, now, names)
	if err != nil {
		errs = append(errs, err)
	}
	s.Groups, err = c.pollGroups(ctx, now, names)
	if err != nil {
		errs = append(errs, err)
	}
	s.Err = errors.Join(errs...)
	s.PollDuration = c.now().Sub(now)
	c.latest.Store(s)
	return s
}

func (c *Collector) watchedTopics(ctx context.Context) ([]string, error) {
	if len(c.cfg.Topics) > 0 {
		return slices.Sorted(slices.Values(slices.Compact(slices.Sorted(slices.Values(c.cfg.Topics))))), nil
	}
	td, err := c.adm.ListTopics(ctx) // excludes internal topics
	if err != nil {
		return nil, err
	}
	return td.Names(), nil // sorted
}

// pollOffsets lists start and end offsets of the named topics, updates the
// per-partition state and returns the topics for the snapshot.
func (c *Collector) pollOffsets(ctx context.Context, now time.Time, names []string) ([]Topic, error) {
	if len(names) == 0 {
		c.topics = map[string]Topic{}
		return nil, nil
	}
	var errs []error
	ends, endErr := c.adm.ListEndOffsets(ctx, names...)
	starts, startErr := c.adm.ListStartOffsets(ctx, names...)
	if endErr != nil {
		errs = append(errs, fmt.Errorf("list end offsets: %w", endErr))
	}
	if startErr != nil {
		errs = append(errs, fmt.Errorf("list start offsets: %w", startErr))
	}

	topics := make([]Topic, 0, len(names))
	for _, name := range names {
		t := Topic{Name: name}
		seen := map[int32]bool{}
		for p, e := range ends[name] {
			seen[p] = true
			st, ok := starts.Lookup(name, p)
			if !ok {
				st.Err = startErr
			}
			t.Partitions = append(t.Partitions, c.updatePartition(now, name, p, e, st))
		}
		// Partitions known from earlier polls but absent now: keep stale.
		for k, ps := range c.parts {
			if k.topic != name || seen[k.partition] {
				continue
			}
			if len(ends[name]) > 0 {
				continue // topic answered without it: partition gone
			}
			perr := endErr
			if perr == nil {
				perr = errors.New("no offsets returned")
			}
			t.Partitions = append(t.Partitions, markStale(ps.last, now, perr))
		}
		if len(t.Partitions) == 0 {
			if endErr != nil {
				t.Err = endErr
			} else {
				t.Err = fmt.Errorf("topic %q: no partitions (unknown topic?)", name)
			}
		} else if endErr != nil && len(ends[name]) == 0 {
			t.Err = endErr
		}
		slices.SortFunc(t.Partitions, func(a, b Partition) int { return cmp.Compare(a.Partition, b.Partition) })
		topics = append(topics, t)
	}
	// Forget state of topics no longer watched.
	watched := map[string]bool{}
	for _, n := range names {
		watched[n] = true
	}
	for k := range c.parts {
		if !watched[k.topic] {
			delete(c.parts, k)
		}
	}
	c.topics = map[string]Topic{}
	for _, t := range topics {
		c.topics[t.Name] = t
	}
	return topics, errors.Join(errs...)
}

func markStale(last Partition, now time.Time, err error) Partition {
	last.Err = err
	last.Stale = true
	last.Age = now.Sub(last.UpdatedAt)
	return last
}

func (c *Collector) updatePartition(now time.Time, topic string, p int32, end, start kadm.ListedOffset) Partition {
	k := tp{topic, p}
	ps := c.parts[k]
	if end.Err != nil {
		if ps == nil {
			return Partition{Partition: p, Start: -1, End: -1, Err: end.Err, Freshness: Freshness{Stale: true}}
		}
		return markStale(ps.last, now, end.Err)
	}
	if ps == nil {
		ps = &partState{table: NewTimeTable(c.cfg.TimeTableSize)}
		c.parts[k] = ps
	}
	np := Partition{Partition: p, End: end.Offset, Start: ps.last.Start, Freshness: Freshness{UpdatedAt: now}}
	if start.Err == nil {
		np.Start = start.Offset
	} else {
		np.Err = fmt.Errorf("start offset: %w", start.Err)
	}
	if !ps.last.UpdatedAt.IsZero() {
		np.Rate, np.RateOK = Rate(ps.last.End, ps.last.UpdatedAt, end.Offset, now)
	}
	ps.table.Add(now, end.Offset)
	ps.last = np
	return np
}

// pollGroups lists groups, fetches their committed offsets in batches and
// computes lag against the partition state.
func (c *Collector) pollGroups(ctx context.Context, now time.Time, topics []string) ([]Group, error) {
	watched := map[string]bool{}
	for _, t := range topics {
		watched[t] = true
	}
	var errs []error
	listed, err := c.adm.ListGroups(ctx)
	if err != nil {
		errs = append(errs, fmt.Errorf("list groups: %w", err))
	}
	if len(listed) == 0 && err != nil {
		// Nothing listed: refresh the groups we already know.
		listed = kadm.ListedGroups{}
		for name, g := range c.groups {
			listed[name] = kadm.ListedGroup{Group: name, State: g.State, ProtocolType: g.ProtocolType}
		}
	}
	maps.DeleteFunc(listed, func(name string, _ kadm.ListedGroup) bool { return !c.filter.keep(name) })
	names := listed.Groups() // sorted
	fetched := kadm.FetchOffsetsResponses{}
	for batch := range slices.Chunk(names, groupBatchSize) {
		maps.Copy(fetched, c.adm.FetchManyOffsets(ctx, batch...))
	}

	next := map[string]Group{}
	nfail := 0
	for _, name := range names {
		lg := listed[name]
		f, ok := fetched[name]
		if !ok {
			f.Err = errors.New("no offset fetch response")
		}
		if f.Err != nil {
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
