package kafka

import (
	"context"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// newCluster starts a 3-broker kfake cluster with topics "orders" and
// "other" (3 partitions each) and returns it with an admin client for test
// setup (produce, member-less commits).
func newCluster(t *testing.T) (*kfake.Cluster, *kgo.Client, *kadm.Client) {
	t.Helper()
	c, err := kfake.NewCluster(kfake.NumBrokers(3), kfake.SeedTopics(3, "orders", "other"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	cl, err := kgo.NewClient(kgo.SeedBrokers(c.ListenAddrs()...), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cl.Close)
	return c, cl, kadm.NewClient(cl)
}

func produce(t *testing.T, cl *kgo.Client, topic string, partition int32, n int) {
	t.Helper()
	var rs []*kgo.Record
	for range n {
		rs = append(rs, &kgo.Record{Topic: topic, Partition: partition, Value: []byte("v")})
	}
	if err := cl.ProduceSync(context.Background(), rs...).FirstErr(); err != nil {
		t.Fatalf("produce: %v", err)
	}
}

// commit commits offsets for a member-less group, as Flink's KafkaSource does.
func commit(t *testing.T, adm *kadm.Client, group, topic string, offsets map[int32]int64) {
	t.Helper()
	var os kadm.Offsets
	for p, at := range offsets {
		os.Add(kadm.Offset{Topic: topic, Partition: p, At: at, LeaderEpoch: -1})
	}
	rs, err := adm.CommitOffsets(context.Background(), group, os)
	if err == nil {
		err = rs.Error()
	}
	if err != nil {
		t.Fatalf("commit %s: %v", group, err)
	}
}

// published is the last snapshot the collector published, nil before the
// first poll ends. The dashboard receives snapshots through OnSnapshot.
func (c *Collector) published() *Snapshot { return c.latest.Load() }

func newTestCollector(t *testing.T, c *kfake.Cluster, cfg Config, extra ...kgo.Opt) (*Collector, *time.Time) {
	t.Helper()
	cfg.Name = "test"
	cfg.Brokers = c.ListenAddrs()
	col, err := newCollector(cfg, nil, extra...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(col.Close)
	now := t0
	col.now = func() time.Time { return now }
	return col, &now
}

func findPartition(t *testing.T, s *Snapshot, topic string, p int32) Partition {
	t.Helper()
	for _, tp := range s.Topics {
		if tp.Name != topic {
			continue
		}
		for _, pp := range tp.Partitions {
			if pp.Partition == p {
				return pp
			}
		}
	}
	t.Fatalf("snapshot has no partition %s/%d: %+v", topic, p, s.Topics)
	return Partition{}
}

func findGroup(t *testing.T, s *Snapshot, name string) Group {
	t.Helper()
	for _, g := range s.Groups {
		if g.Name == name {
			return g
		}
	}
	t.Fatalf("snapshot has no group %q: %+v", name, s.Groups)
	return Group{}
}

func findGP(t *testing.T, g Group, topic string, p int32) GroupPartition {
	t.Helper()
	for _, gp := range g.Partitions {
		if gp.Topic == topic && gp.Partition == p {
			return gp
		}
	}
	t.Fatalf("group %s has no partition %s/%d: %+v", g.Name, topic, p, g.Partitions)
	return GroupPartition{}
}

func TestPollOffsetsRatesLag(t *testing.T) {
	c, cl, adm := newCluster(t)
	produce(t, cl, "orders", 0, 10)
	produce(t, cl, "orders", 1, 5)
	commit(t, adm, "flink-job", "orders", map[int32]int64{0: 4, 1: 5})
	commit(t, adm, "elsewhere", "other", map[int32]int64{0: 0}) // no commit on a watched topic

	col, now := newTestCollector(t, c, Config{Topics: []string{"orders"}})
	ctx := context.Background()

	s := col.PollOnce(ctx)
	if s.Err != nil {
		t.Fatalf("PollOnce().Err = %v, want nil", s.Err)
	}
	if len(s.Topics) != 1 || s.Topics[0].Name != "orders" || len(s.Topics[0].Partitions) != 3 {
		t.Fatalf("PollOnce().Topics = %+v, want orders with 3 partitions", s.Topics)
	}
	for p, want := range map[int32]int64{0: 10, 1: 5, 2: 0} {
		got := findPartition(t, s, "orders", p)
		if got.End != want || got.Start != 0 || got.RateOK || got.Stale || got.Err != nil {
			t.Errorf("partition %d = %+v, want end %d, start 0, no rate yet, fresh", p, got, want)
		}
	}
	if len(s.Groups) != 1 {
		t.Fatalf("PollOnce().Groups = %+v, want only flink-job", s.Groups)
	}
	g := findGroup(t, s, "flink-job")
	if g.State != "Empty" || len(g.Partitions) != 2 {
		t.Errorf("group = %+v, want member-less (Empty) group with 2 partitions", g)
	}
	if gp := findGP(t, g, "orders", 0); gp.Committed != 4 || gp.Lag != 6 || gp.LagKind != TimeLagAtLeast || gp.LagSeconds != 0 {
		t.Errorf("orders/0 = %+v, want committed 4, lag 6, at-least 0 s", gp)
	}
	if gp := findGP(t, g, "orders", 1); gp.Lag != 0 || gp.LagKind != TimeLagCaughtUp {
		t.Errorf("orders/1 = %+v, want caught up", gp)
	}

	// Ten seconds later, 20 more records on partition 0, commit at 20.
	produce(t, cl, "orders", 0, 20)
	commit(t, adm, "flink-job", "orders", map[int32]int64{0: 20})
	*now = t0.Add(10 * time.Second)
	s2 := col.PollOnce(ctx)
	if s2.Err != nil {
		t.Fatalf("second PollOnce().Err = %v, want nil", s2.Err)
	}
	if p := findPartition(t, s2, "orders", 0); p.End != 30 || !p.RateOK || p.Rate != 2 {
		t.Errorf("orders/0 = %+v, want end 30, rate 2/s", p)
	}
	if p := findPartition(t, s2, "orders", 1); !p.RateOK || p.Rate != 0 {
		t.Errorf("orders/1 = %+v, want rate 0/s", p)
	}
	// End passed 20 halfway between the samples (10 at t0, 30 at t0+10s).
	if gp := findGP(t, findGroup(t, s2, "flink-job"), "orders", 0); gp.Lag != 10 || gp.LagKind != TimeLagInterpolated || gp.LagSeconds != 5 {
		t.Errorf("orders/0 = %+v, want lag 10, interpolated 5 s", gp)
	}
	// The first snapshot is untouched.
	if gp := findGP(t, g, "orders", 0); gp.Committed != 4 || gp.Lag != 6 {
		t.Errorf("first snapshot changed: %+v", gp)
	}
	if col.published() != s2 {
		t.Errorf("published() is not the last snapshot")
	}
}

func TestAllTopicsWhenNoneConfigured(t *testing.T) {
	c, cl, adm := newCluster(t)
	produce(t, cl, "other", 2, 3)
	commit(t, adm, "g", "other", map[int32]int64{2: 1})
	col, _ := newTestCollector(t, c, Config{})
	s := col.PollOnce(context.Background())
	if s.Err != nil || len(s.Topics) != 2 || s.Topics[0].Name != "orders" || s.Topics[1].Name != "other" {
		t.Fatalf("PollOnce() = topics %+v, err %v; want orders and other", s.Topics, s.Err)
	}
	if gp := findGP(t, findGroup(t, s, "g"), "other", 2); gp.Lag != 2 {
		t.Errorf("g other/2 = %+v, want lag 2", gp)
	}
}

func TestClusterDownKeepsLastGoodValues(t *testing.T) {
	c, cl, adm := newCluster(t)
	produce(t, cl, "orders", 0, 10)
	commit(t, adm, "flink-job", "orders", map[int32]int64{0: 4})
	col, now := newTestCollector(t, c, Config{RequestTimeout: time.Second})
	ctx := context.Background()
	if s := col.PollOnce(ctx); s.Err != nil {
		t.Fatalf("PollOnce().Err = %v, want nil", s.Err)
	}

	c.Close()
	*now = t0.Add(7 * time.Second)
	s := col.PollOnce(ctx)
	if s.Err == nil {
		t.Fatalf("PollOnce() with the cluster closed: Err = nil, want an error")
	}
	p := findPartition(t, s, "orders", 0)
	if p.End != 10 || !p.Stale || p.Age != 7*time.Second || p.Err == nil || !p.UpdatedAt.Equal(t0) {
		t.Errorf("orders/0 = %+v, want last good end 10, stale, age 7s, Err set", p)
	}
	g := findGroup(t, s, "flink-job")
	if !g.Stale || g.Err == nil || g.Age != 7*time.Second {
		t.Errorf("group = %+v, want stale, age 7s, Err set", g)
	}
	if gp := findGP(t, g, "orders", 0); gp.Committed != 4 || gp.Lag != 6 {
		t.Errorf("orders/0 = %+v, want last good commit 4, lag 6", gp)
	}
}

// writeKeys are request keys that change cluster state.
var writeKeys = map[int16]bool{
	int16(kmsg.Produce): true, int16(kmsg.OffsetCommit): true, int16(kmsg.CreateTopics): true,
	int16(kmsg.DeleteTopics): true, int16(kmsg.DeleteRecords): true, int16(kmsg.InitProducerID): true,
	int16(kmsg.AddPartitionsToTxn): true, int16(kmsg.AddOffsetsToTxn): true, int16(kmsg.EndTxn): true,
	int16(kmsg.TxnOffsetCommit): true, int16(kmsg.CreateACLs): true, int16(kmsg.DeleteACLs): true,
	int16(kmsg.AlterConfigs): true, int16(kmsg.IncrementalAlterConfigs): true,
	int16(kmsg.AlterReplicaLogDirs): true, int16(kmsg.CreatePartitions): true, int16(kmsg.DeleteGroups): true,
	int16(kmsg.OffsetDelete): true, int16(kmsg.ElectLeaders): true, int16(kmsg.AlterPartitionAssignments): true,
	int16(kmsg.AlterClientQuotas): true, int16(kmsg.AlterUserSCRAMCredentials): true,
	int16(kmsg.JoinGroup): true, int16(kmsg.SyncGroup): true, int16(kmsg.LeaveGroup): true,
	int16(kmsg.Heartbeat): true, int16(kmsg.ConsumerGroupHeartbeat): true, int16(kmsg.WriteTxnMarkers): true,
	int16(kmsg.CreateDelegationToken): true, int16(kmsg.UnregisterBroker): true,
}

func TestReadOnly(t *testing.T) {
	c, cl, adm := newCluster(t)
	produce(t, cl, "orders", 0, 10)
	groups := []string{"g1", "g2", "g3", "g4", "g5", "g6"}
	for _, g := range groups {
		commit(t, adm, g, "orders", map[int32]int64{0: 1})
	}

	var mu sync.Mutex
	seen := map[int16]int{}
	c.Control(func(req kmsg.Request) (kmsg.Response, error, bool) {
		mu.Lock()
		seen[req.Key()]++
		mu.Unlock()
		return nil, nil, false // observe only
	})

	col, now := newTestCollector(t, c, Config{})
	for i := range 3 {
		*now = t0.Add(time.Duration(i) * 5 * time.Second)
		if s := col.PollOnce(context.Background()); s.Err != nil || len(s.Groups) != len(groups) {
			t.Fatalf("PollOnce() = %d groups, err %v; want %d, nil", len(s.Groups), s.Err, len(groups))
		}
	}
	mu.Lock()
	defer mu.Unlock()
	for k, n := range seen {
		if writeKeys[k] {
			t.Errorf("collector sent %d write request(s) %s", n, kmsg.NameForKey(k))
		}
	}
	// Offsets of all groups are batched: at most one OffsetFetch per
	// coordinator (3 brokers) per poll, never one per group.
	if n := seen[int16(kmsg.OffsetFetch)]; n == 0 || n > 3*3 {
		t.Errorf("OffsetFetch requests over 3 polls = %d, want 1..9 for %d groups", n, len(groups))
	}
	t.Logf("requests over 3 polls: %v", seen)
}

func TestGroupFilters(t *testing.T) {
	c, _, adm := newCluster(t)
	for _, g := range []string{"flink-orders", "flink-orders-test", "console-consumer-7", "etl"} {
		commit(t, adm, g, "orders", map[int32]int64{0: 0})
	}
	var mu sync.Mutex
	var fetched []string
	c.ControlKey(int16(kmsg.OffsetFetch), func(kreq kmsg.Request) (kmsg.Response, error, bool) {
		mu.Lock()
		defer mu.Unlock()
		req := kreq.(*kmsg.OffsetFetchRequest)
		for _, g := range req.Groups {
			fetched = append(fetched, g.Group)
		}
		if req.Group != "" {
			fetched = append(fetched, req.Group)
		}
		return nil, nil, false
	})
	col, _ := newTestCollector(t, c, Config{Groups: GroupFilter{Allow: []string{"^flink-", "^console-"}, Deny: []string{"-test$", "^console-consumer-"}}})
	s := col.PollOnce(context.Background())
	if s.Err != nil {
		t.Fatalf("PollOnce().Err = %v, want nil", s.Err)
	}
	var got []string
	for _, g := range s.Groups {
		got = append(got, g.Name)
	}
	if !slices.Equal(got, []string{"flink-orders"}) {
		t.Errorf("PollOnce().Groups = %q, want [flink-orders]", got)
	}
	mu.Lock()
	defer mu.Unlock()
	if !slices.Equal(fetched, []string{"flink-orders"}) {
		t.Errorf("groups in OffsetFetch requests = %q, want only [flink-orders]: filtered groups are not fetched", fetched)
	}
}

func TestNewCollectorRejectsBadGroupPattern(t *testing.T) {
	_, err := NewKafkaCollector(Config{Name: "c", Brokers: []string{"127.0.0.1:1"}, Groups: GroupFilter{Deny: []string{"("}}}, nil)
	if err == nil || !strings.Contains(err.Error(), `groups.deny[0]: bad pattern "("`) {
		t.Errorf("NewKafkaCollector(bad deny pattern) = %v, want an error naming groups.deny[0]", err)
	}
}

func TestRunStopsOnCancel(t *testing.T) {
	c, _, _ := newCluster(t)
	col, _ := newTestCollector(t, c, Config{PollInterval: 10 * time.Millisecond})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { col.Run(ctx); close(done) }()
	for col.published() == nil {
		time.Sleep(5 * time.Millisecond)
	}
	cancel()
	<-done
}

// TestLogStartRefresh: the log start offsets are re-read once a minute by
// default, and as often as LogStartRefresh says.
func TestLogStartRefresh(t *testing.T) {
	for _, tc := range []struct {
		name    string
		refresh time.Duration
		after   time.Duration // when the deletion shows
	}{{"default", 0, time.Minute}, {"every 5 s", 5 * time.Second, 5 * time.Second}} {
		t.Run(tc.name, func(t *testing.T) {
			c, cl, adm := newCluster(t)
			produce(t, cl, "orders", 0, 10)
			col, now := newTestCollector(t, c, Config{Topics: []string{"orders"}, LogStartRefresh: tc.refresh})
			ctx := context.Background()
			if p := findPartition(t, col.PollOnce(ctx), "orders", 0); p.Start != 0 {
				t.Fatalf("log start %d before the deletion, want 0", p.Start)
			}
			var cut kadm.Offsets
			cut.AddOffset("orders", 0, 4, -1)
			if _, err := adm.DeleteRecords(ctx, cut); err != nil {
				t.Fatal(err)
			}
			*now = now.Add(tc.after - time.Second)
			if p := findPartition(t, col.PollOnce(ctx), "orders", 0); p.Start != 0 {
				t.Errorf("log start %d %v after the first read, want 0 still (not re-read yet)", p.Start, tc.after-time.Second)
			}
			*now = now.Add(time.Second)
			if p := findPartition(t, col.PollOnce(ctx), "orders", 0); p.Start != 4 {
				t.Errorf("log start %d %v after the first read, want 4 (re-read)", p.Start, tc.after)
			}
		})
	}
}
