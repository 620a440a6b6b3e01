package kafka

import (
	"context"
	"net"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
)

// checkNoGoroutineLeak waits up to five seconds for the number of
// goroutines to fall back to baseline and fails with all stacks if it does
// not.
func checkNoGoroutineLeak(t *testing.T, baseline int) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		n := runtime.NumGoroutine()
		if n <= baseline {
			return
		}
		if time.Now().After(deadline) {
			buf := make([]byte, 1<<20)
			buf = buf[:runtime.Stack(buf, true)]
			t.Fatalf("goroutines after Close = %d, want <= %d (before the test); stacks:\n%s", n, baseline, buf)
		}
		runtime.Gosched()
		time.Sleep(10 * time.Millisecond)
	}
}

func listenPorts(t *testing.T, c *kfake.Cluster) []int {
	t.Helper()
	var ports []int
	for _, a := range c.ListenAddrs() {
		_, p, err := net.SplitHostPort(a)
		if err != nil {
			t.Fatal(err)
		}
		n, err := strconv.Atoi(p)
		if err != nil {
			t.Fatal(err)
		}
		ports = append(ports, n)
	}
	return ports
}

// TestBrokersDownAndBack stops a 3-broker cluster between polls and
// restarts it on the same ports with the same data (kfake persists topics,
// records and commits in DataDir): the poll while it is down keeps the last
// good values, marked stale with their age and error; polls after the
// restart are fresh again; Close leaves no goroutine behind.
func TestBrokersDownAndBack(t *testing.T) {
	baseline := runtime.NumGoroutine()
	dir := t.TempDir()
	c, err := kfake.NewCluster(kfake.NumBrokers(3), kfake.SeedTopics(3, "orders"), kfake.DataDir(dir))
	if err != nil {
		t.Fatal(err)
	}
	ports := listenPorts(t, c)
	setup, err := kgo.NewClient(kgo.SeedBrokers(c.ListenAddrs()...), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	if err != nil {
		t.Fatal(err)
	}
	produce(t, setup, "orders", 0, 10)
	produce(t, setup, "orders", 2, 3)
	commit(t, kadm.NewClient(setup), "flink-job", "orders", map[int32]int64{0: 4, 2: 3})
	setup.Close()

	col, err := newCollector(Config{Name: "test", Brokers: c.ListenAddrs(), RequestTimeout: 2 * time.Second}, nil)
	if err != nil {
		t.Fatal(err)
	}
	now := t0
	col.now = func() time.Time { return now }
	ctx := context.Background()

	check := func(when string, s *Snapshot, stale bool, age time.Duration) {
		t.Helper()
		for p, end := range map[int32]int64{0: 10, 1: 0, 2: 3} {
			got := findPartition(t, s, "orders", p)
			if got.End != end || got.Stale != stale || got.Age != age || (got.Err != nil) != stale {
				t.Errorf("%s: orders/%d = %+v, want end %d, stale %v, age %v, Err set %v", when, p, got, end, stale, age, stale)
			}
		}
		g := findGroup(t, s, "flink-job")
		if g.Stale != stale || g.Age != age || (g.Err != nil) != stale {
			t.Errorf("%s: group = %+v, want stale %v, age %v, Err set %v", when, g, stale, age, stale)
		}
		if gp := findGP(t, g, "orders", 0); gp.Committed != 4 || gp.Lag != 6 {
			t.Errorf("%s: flink-job orders/0 = %+v, want committed 4, lag 6", when, gp)
		}
		if gp := findGP(t, g, "orders", 2); gp.Committed != 3 || gp.Lag != 0 {
			t.Errorf("%s: flink-job orders/2 = %+v, want committed 3, lag 0", when, gp)
		}
	}

	if s := col.PollOnce(ctx); s.Err != nil {
		t.Fatalf("PollOnce() before the outage: Err = %v, want nil", s.Err)
	} else {
		check("before the outage", s, false, 0)
	}

	c.Close()
	now = t0.Add(15 * time.Second)
	s := col.PollOnce(ctx)
	if s.Err == nil {
		t.Fatalf("PollOnce() with all brokers down: Err = nil, want an error")
	}
	check("brokers down", s, true, 15*time.Second)
	if len(s.Topics) != 1 || s.Topics[0].Name != "orders" {
		t.Errorf("brokers down: topics = %+v, want the last known [orders]", s.Topics)
	}

	c2, err := kfake.NewCluster(kfake.NumBrokers(3), kfake.Ports(ports...), kfake.DataDir(dir))
	if err != nil {
		t.Fatalf("restart on ports %v: %v", ports, err)
	}
	deadline := time.Now().Add(20 * time.Second)
	for i := 1; ; i++ {
		now = t0.Add(time.Duration(15+i) * time.Second)
		s = col.PollOnce(ctx)
		if s.Err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("PollOnce() after the restart: Err = %v, want nil within 20 s", s.Err)
		}
	}
	check("after the restart", s, false, 0)
	if p := findPartition(t, s, "orders", 0); !p.UpdatedAt.Equal(now) || !p.RateOK || p.Rate != 0 {
		t.Errorf("after the restart: orders/0 = %+v, want updated now, rate 0/s against the sample before the outage", p)
	}

	col.Close()
	c2.Close()
	checkNoGoroutineLeak(t, baseline)
}

// TestRunAndCloseLeaveNoGoroutines runs the background poller against a
// cluster, cancels it, closes everything and checks that nothing is left.
func TestRunAndCloseLeaveNoGoroutines(t *testing.T) {
	baseline := runtime.NumGoroutine()
	c, err := kfake.NewCluster(kfake.NumBrokers(3), kfake.SeedTopics(3, "orders"))
	if err != nil {
		t.Fatal(err)
	}
	col, err := NewKafkaCollector(Config{Name: "test", Brokers: c.ListenAddrs(), PollInterval: 5 * time.Millisecond}, nil)
	if err != nil {
		t.Fatal(err)
	}
	notified := make(chan *Snapshot, 100)
	col.OnSnapshot(func(s *Snapshot) {
		select {
		case notified <- s:
		default:
		}
	})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { col.Run(ctx); close(done) }()
	select {
	case s := <-notified:
		if s != col.published() && s.CollectedAt.After(col.published().CollectedAt) {
			t.Errorf("OnSnapshot got a snapshot newer than published()")
		}
	case <-time.After(10 * time.Second):
		t.Fatal("OnSnapshot was not called within 10 s of Run")
	}
	deadline := time.Now().Add(10 * time.Second)
	for s := col.published(); s == nil || s.CollectedAt.IsZero() || len(s.Topics) == 0; s = col.published() {
		if time.Now().After(deadline) {
			t.Fatalf("published() = %+v after 10 s, want a snapshot with topics", s)
		}
		time.Sleep(5 * time.Millisecond)
	}
	if s := col.published(); s.Err != nil || !strings.EqualFold(s.Topics[0].Name, "orders") {
		t.Errorf("published() = %+v, want orders and no error", s)
	}
	cancel()
	<-done
	col.Close()
	c.Close()
	checkNoGoroutineLeak(t, baseline)
}
