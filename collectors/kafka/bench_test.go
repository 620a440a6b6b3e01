package kafka

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// requestCounter counts the requests a client writes, per API key.
type requestCounter struct {
	mu sync.Mutex
	n  map[int16]int
}

// OnBrokerWrite implements kgo.HookBrokerWrite.
func (r *requestCounter) OnBrokerWrite(_ kgo.BrokerMetadata, key int16, _ int, _, _ time.Duration, err error) {
	if err != nil {
		return
	}
	r.mu.Lock()
	r.n[key]++
	r.mu.Unlock()
}

func (r *requestCounter) reset() map[int16]int {
	r.mu.Lock()
	defer r.mu.Unlock()
	n := r.n
	r.n = map[int16]int{}
	return n
}

// report adds requests/op, ms/op and per-key request counts per op.
func (r *requestCounter) report(b *testing.B, elapsed time.Duration) {
	counts := r.reset()
	total := 0
	for k, n := range counts {
		total += n
		b.ReportMetric(float64(n)/float64(b.N), kmsg.NameForKey(k)+"/op")
	}
	b.ReportMetric(float64(total)/float64(b.N), "requests/op")
	b.ReportMetric(float64(elapsed.Milliseconds())/float64(b.N), "ms/op")
}

// poll10kCluster is a 3-broker cluster with 50 topics of 200 partitions
// (10,000 partitions) and 50 member-less groups, group i having committed
// every partition of topic i with kadm CommitOffsets, as Flink does.
func poll10kCluster(b *testing.B) (*kfake.Cluster, []string, []string) {
	b.Helper()
	const nTopics, nParts = 50, 200
	var topics, groups []string
	for i := range nTopics {
		topics = append(topics, fmt.Sprintf("topic-%02d", i))
		groups = append(groups, fmt.Sprintf("flink-job-%02d", i))
	}
	c, err := kfake.NewCluster(kfake.NumBrokers(3), kfake.SeedTopics(nParts, topics...))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(c.Close)
	cl, err := kgo.NewClient(kgo.SeedBrokers(c.ListenAddrs()...))
	if err != nil {
		b.Fatal(err)
	}
	defer cl.Close()
	adm := kadm.NewClient(cl)
	for i, g := range groups {
		var os kadm.Offsets
		for p := range int32(nParts) {
			os.Add(kadm.Offset{Topic: topics[i], Partition: p, At: 0, LeaderEpoch: -1})
		}
		rs, err := adm.CommitOffsets(context.Background(), g, os)
		if err == nil {
			err = rs.Error()
		}
		if err != nil {
			b.Fatalf("commit %s: %v", g, err)
		}
	}
	return c, topics, groups
}

// kminionPoll re-creates kminion's per-scrape request pattern: metadata,
// start and end offsets of every topic, the group list, then one
// OffsetFetch per group, one group after another.
func kminionPoll(ctx context.Context, adm *kadm.Client) (int, error) {
	td, err := adm.ListTopics(ctx)
	if err != nil {
		return 0, err
	}
	if _, err := adm.ListStartOffsets(ctx, td.Names()...); err != nil {
		return 0, err
	}
	if _, err := adm.ListEndOffsets(ctx, td.Names()...); err != nil {
		return 0, err
	}
	listed, err := adm.ListGroups(ctx)
	if err != nil {
		return 0, err
	}
	n := 0
	for _, g := range listed.Groups() {
		os, err := adm.FetchOffsets(ctx, g)
		if err != nil {
			return 0, err
		}
		os.Each(func(kadm.OffsetResponse) { n++ })
	}
	return n, nil
}

// BenchmarkPoll10k measures one poll of 10,000 partitions and 50
// member-less groups on a 3-broker kfake cluster: the collector's poll next
// to the same data read the way kminion reads it. Both report requests/op,
// per-key requests per op, and ms/op.
//
// The top-level skewscope and kminion-style runs are on loopback, where both
// are dominated by kfake's CPU work. The rtt=... runs repeat both polls on
// the same cluster with both clients dialing through latencyDialer, which
// delays every response by a simulated network round trip (1 ms about
// same-zone, 5 ms about cross-zone; see latencyDialer for the model and its
// limits). There a poll's cost is mostly its chain of dependent round trips.
func BenchmarkPoll10k(b *testing.B) {
	c, topics, groups := poll10kCluster(b)
	benchPoll10k(b, "Poll10k", c, topics, groups)
	for _, rtt := range []time.Duration{time.Millisecond, 5 * time.Millisecond} {
		name := "rtt=" + rtt.String()
		b.Run(name, func(b *testing.B) {
			benchPoll10k(b, "Poll10k "+name, c, topics, groups, kgo.Dialer(latencyDialer(rtt)))
		})
	}
}

// benchPoll10k runs the skewscope and kminion-style sub-benchmarks with the
// same extra client options and prints their wall time ratio.
func benchPoll10k(b *testing.B, label string, c *kfake.Cluster, topics, groups []string, extra ...kgo.Opt) {
	ctx := context.Background()
	var ms [2]float64

	b.Run("skewscope", func(b *testing.B) {
		rc := &requestCounter{n: map[int16]int{}}
		opts := append([]kgo.Opt{kgo.WithHooks(rc)}, extra...)
		col, err := newCollector(Config{Name: "bench", Brokers: c.ListenAddrs(), RequestTimeout: time.Minute}, nil, opts...)
		if err != nil {
			b.Fatal(err)
		}
		defer col.Close()
		if s := col.PollOnce(ctx); s.Err != nil || len(s.Groups) != len(groups) || len(s.Topics) != len(topics) {
			b.Fatalf("warm-up PollOnce() = %d topics, %d groups, err %v", len(s.Topics), len(s.Groups), s.Err)
		}
		rc.reset()
		b.ResetTimer()
		start := time.Now()
		for range b.N {
			if s := col.PollOnce(ctx); s.Err != nil || len(s.Groups) != len(groups) {
				b.Fatalf("PollOnce() = %d groups, err %v", len(s.Groups), s.Err)
			}
		}
		elapsed := time.Since(start)
		b.StopTimer()
		rc.report(b, elapsed)
		ms[0] = float64(elapsed.Microseconds()) / 1e3 / float64(b.N)
	})

	b.Run("kminion-style", func(b *testing.B) {
		rc := &requestCounter{n: map[int16]int{}}
		opts := append([]kgo.Opt{kgo.SeedBrokers(c.ListenAddrs()...), kgo.WithHooks(rc)}, extra...)
		cl, err := kgo.NewClient(opts...)
		if err != nil {
			b.Fatal(err)
		}
		defer cl.Close()
		adm := kadm.NewClient(cl)
		if _, err := kminionPoll(ctx, adm); err != nil {
			b.Fatalf("warm-up: %v", err)
		}
		rc.reset()
		b.ResetTimer()
		start := time.Now()
		for range b.N {
			if n, err := kminionPoll(ctx, adm); err != nil || n != 10000 {
				b.Fatalf("kminion-style poll = %d committed partitions, err %v; want 10000, nil", n, err)
			}
		}
		elapsed := time.Since(start)
		b.StopTimer()
		rc.report(b, elapsed)
		ms[1] = float64(elapsed.Microseconds()) / 1e3 / float64(b.N)
	})
	if ms[0] > 0 && ms[1] > 0 {
		fmt.Printf("%s: kminion-style / skewscope wall time per poll = %.1fx\n", label, ms[1]/ms[0])
	}
}
