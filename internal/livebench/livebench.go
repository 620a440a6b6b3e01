// Package livebench feeds a live.Store the polls of one large Kafka source
// vertex, the one the live-update goals are set for: 10,000 partitions (20
// topics of 500) read at parallelism 64. Each poll is a Kafka snapshot
// whose end offsets moved and a Flink snapshot whose current offsets
// moved, so that every poll makes a new view with changed figures and one
// more sparkline sample. cmd/wsload serves it through the real web server;
// the figures are invented, the snapshots are shaped as the collectors
// hand them in.
package livebench

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strconv"
	"time"

	"github.com/skewscope/skewscope/assign"
	"github.com/skewscope/skewscope/collectors/flink"
	"github.com/skewscope/skewscope/collectors/kafka"
	"github.com/skewscope/skewscope/live"
)

// The source's names, as its page's URL and its websocket topic carry them.
const (
	Job      = "0123456789abcdef0123456789abcdef"
	Vertex   = "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
	Endpoint = "jm"
	Cluster  = "prod"
)

// topicSize is the partitions of each topic the source reads (the last
// one may have fewer).
const topicSize = 500

// Config is the shape of the source.
type Config struct {
	Partitions     int // over topics of 500
	Parallelism    int
	MaxParallelism int // 0 means 2 × Parallelism
	Seed           uint64
}

// Source is the store and what its next poll moves. Its methods are not
// safe for concurrent use; the store's readers are.
type Source struct {
	store  *live.Store
	cfg    Config
	topics []assign.Topic
	parts  []assign.TopicPartition
	owner  []int // subtask reading each of parts
	// ids are the source's offset metric ids (current then committed, per
	// partition), parsed once like the collector's id cache.
	ids  []string
	tmpl *flink.KafkaSourceObservation
	rng  *rand.Rand
	// Per partition: its end offset, its base produce rate and the last
	// (records/s), and how far behind the source is.
	end  []int64
	rate []float64
	now  []float64
	lag  []float64
	// slow are the subtasks falling behind.
	slow  []bool
	last  time.Time
	polls int
	vals  []flink.Metric
}

// New returns a source whose store has seen no poll yet.
func New(cfg Config, opts live.Options) *Source {
	if cfg.MaxParallelism == 0 {
		cfg.MaxParallelism = 2 * cfg.Parallelism
	}
	s := &Source{store: live.New(opts), cfg: cfg, rng: rand.New(rand.NewPCG(cfg.Seed, cfg.Seed^0x9e3779b97f4a7c15)),
		slow: make([]bool, cfg.Parallelism)}
	for i := 0; i*topicSize < cfg.Partitions; i++ {
		s.topics = append(s.topics, assign.Topic{Name: fmt.Sprintf("topic-%02d", i), Partitions: min(topicSize, cfg.Partitions-i*topicSize)})
	}
	s.parts = assign.Partitions(s.topics)
	for _, tp := range s.parts {
		o, _ := assign.KafkaSplitOwner(tp, cfg.Parallelism)
		s.owner = append(s.owner, o)
		base := fmt.Sprintf("%d.Source__Kafka_Source.KafkaSourceReader.topic.%s.partition.%d.", o, tp.Topic, tp.Partition)
		s.ids = append(s.ids, base+"currentOffset", base+"committedOffset")
		// Skewed keys: most partitions 20–400 records/s, one in a hundred hot.
		r := 20 + 380*s.rng.Float64()*s.rng.Float64()
		if s.rng.IntN(100) == 0 {
			r *= 10
		}
		s.rate = append(s.rate, r)
		s.now = append(s.now, r)
		s.end = append(s.end, 1_000_000+int64(s.rng.IntN(1_000_000)))
		s.lag = append(s.lag, r*s.rng.Float64()*2)
	}
	s.tmpl = flink.ParseKafkaSourceMetricIDs(s.ids)
	s.slow[s.rng.IntN(cfg.Parallelism)] = true
	s.slow[s.rng.IntN(cfg.Parallelism)] = true
	return s
}

// Store is the store the polls go to.
func (s *Source) Store() *live.Store { return s.store }

// Fill hands in n polls every interval, the last at last: the history
// a dashboard running for a while has (360 polls fill the sparklines).
func (s *Source) Fill(n int, interval time.Duration, last time.Time) {
	for i := n - 1; i >= 0; i-- {
		s.Poll(last.Add(-time.Duration(i) * interval))
	}
}

// Poll hands the store a Kafka poll, then a Flink poll, both at at.
func (s *Source) Poll(at time.Time) {
	s.PollKafka(at)
	s.PollFlink(at)
}

// PollKafka moves every partition on to at and hands the store a Kafka
// snapshot collected at at.
func (s *Source) PollKafka(at time.Time) {
	dt := 1.0
	if !s.last.IsZero() {
		dt = at.Sub(s.last).Seconds()
	}
	s.last = at
	s.polls++
	for i := range s.parts {
		// The rate drifts around its base; the lag grows under a slow
		// subtask and shrinks under the others.
		s.now[i] = max(0, s.rate[i]*(1+0.1*s.rng.NormFloat64()))
		s.end[i] += int64(s.now[i] * dt)
		drift := s.rate[i] * 0.05 * s.rng.NormFloat64() * dt
		if s.slow[s.owner[i]] {
			drift += s.rate[i] * 0.3 * dt
		} else {
			drift -= s.lag[i] * 0.1
		}
		s.lag[i] = math.Min(max(0, s.lag[i]+drift), float64(s.end[i]))
	}

	ks := &kafka.Snapshot{Cluster: Cluster, CollectedAt: at, PollDuration: 20 * time.Millisecond, MetadataAt: at}
	i := 0
	for _, t := range s.topics {
		kt := kafka.Topic{Name: t.Name, ReadAt: at, Partitions: make([]kafka.Partition, t.Partitions)}
		for n := range kt.Partitions {
			kt.Partitions[n] = kafka.Partition{Partition: int32(n), End: s.end[i], Rate: s.now[i], RateOK: s.polls > 1,
				Freshness: kafka.Freshness{UpdatedAt: at}}
			i++
		}
		ks.Topics = append(ks.Topics, kt)
	}
	s.store.UpdateKafka(ks)
}

// PollFlink hands the store a Flink snapshot collected at at, with the
// source reading where the last PollKafka left it.
func (s *Source) PollFlink(at time.Time) {
	// The values answer, applied to the parsed ids as the collector does.
	s.vals = s.vals[:0]
	for i := range s.parts {
		cur := s.end[i] - int64(s.lag[i])
		s.vals = append(s.vals,
			flink.Metric{ID: s.ids[2*i], Raw: strconv.FormatInt(cur, 10)},
			flink.Metric{ID: s.ids[2*i+1], Raw: strconv.FormatInt(cur-int64(s.rate[i]*5), 10)})
	}
	obs := *s.tmpl
	obs.States = slices.Clone(s.tmpl.States)
	obs.ApplyValues(s.vals)
	subs := make([]flink.SubtaskSnapshot, s.cfg.Parallelism)
	for i := range subs {
		busy := 0.3 + 0.4*s.rng.Float64()
		if s.slow[i] {
			busy = 1
		}
		subs[i] = flink.SubtaskSnapshot{Index: i, BusyRatio: busy, RecordsOutPerSecond: 100, RecordsInPerSecond: 100, StateSize: -1}
	}
	s.store.UpdateFlink(&flink.Snapshot{Endpoint: Endpoint, CollectedAt: at, Jobs: []flink.JobSnapshot{{ID: Job, Name: "big", State: "RUNNING",
		Vertices: []flink.VertexSnapshot{{ID: Vertex, Name: "Source", Parallelism: s.cfg.Parallelism, MaxParallelism: s.cfg.MaxParallelism,
			Source: true, Kafka: &obs, Subtasks: subs}}}}})
}
