package web

import (
	"context"
	"net"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/skewscope/skewscope/collectors/kafka"
	"github.com/skewscope/skewscope/live"
)

// TestTopicPageThroughBrokerOutage runs the real Kafka collector against a
// 3-broker kfake cluster, stops the cluster and restarts it on the same
// ports: the topic page and the overview show the last values as stale with
// the error, then fresh values again; nothing is left running afterwards.
func TestTopicPageThroughBrokerOutage(t *testing.T) {
	baseline := runtime.NumGoroutine()
	dir := t.TempDir()
	c, err := kfake.NewCluster(kfake.NumBrokers(3), kfake.SeedTopics(4, "orders"), kfake.DataDir(dir))
	if err != nil {
		t.Fatal(err)
	}
	var ports []int
	for _, a := range c.ListenAddrs() {
		_, p, _ := net.SplitHostPort(a)
		n, _ := strconv.Atoi(p)
		ports = append(ports, n)
	}
	cl, err := kgo.NewClient(kgo.SeedBrokers(c.ListenAddrs()...), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	if err != nil {
		t.Fatal(err)
	}
	for i := range 40 {
		r := &kgo.Record{Topic: "orders", Partition: int32(i % 4), Value: []byte("v")}
		if err := cl.ProduceSync(context.Background(), r).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	cl.Close()

	col, err := kafka.NewKafkaCollector(kafka.Config{Name: "prod", Brokers: c.ListenAddrs(), RequestTimeout: 2 * time.Second}, nil)
	if err != nil {
		t.Fatal(err)
	}
	st := live.New(live.Options{})
	ts := newLiveServer(t, st, nil)
	ctx := context.Background()
	st.UpdateKafka(col.PollOnce(ctx))

	doc := getDoc(t, ts.URL+"/kafka/prod/topics/orders", 200)
	if got := doc.Find("[data-live-state]").Text(); got != "live" {
		t.Fatalf("before the outage the page says %q", got)
	}
	if n := doc.Find("tr.stale").Length(); n != 0 {
		t.Fatalf("%d stale rows before the outage", n)
	}

	c.Close()
	if s := col.PollOnce(ctx); s.Err == nil {
		t.Fatal("poll with every broker down reported no error")
	} else {
		st.UpdateKafka(s)
	}
	doc = getDoc(t, ts.URL+"/kafka/prod/topics/orders", 200)
	if got := doc.Find("[data-live-state]").Text(); got != "stale" {
		t.Errorf("during the outage the page says %q, want stale", got)
	}
	if doc.Find("[data-testid=backend-error]").Text() == "" {
		t.Error("during the outage the page shows no error")
	}
	if n := doc.Find("tr.stale").Length(); n != 4 {
		t.Errorf("%d stale rows during the outage, want 4", n)
	}
	var ends []string
	doc.Find("[data-testid=partition-row] td:nth-child(3)").Each(func(_ int, s *goquery.Selection) { ends = append(ends, s.Text()) })
	if got := strings.Join(ends, " "); got != "10 10 10 10" {
		t.Errorf("end offsets during the outage %q, want the last good values 10 10 10 10", got)
	}
	ov := st.State().Overview()
	if len(ov.Clusters) != 1 || ov.Clusters[0].Age.Err == "" {
		t.Errorf("overview during the outage: %+v, want the cluster's error", ov.Clusters)
	}

	c2, err := kfake.NewCluster(kfake.NumBrokers(3), kfake.Ports(ports...), kfake.DataDir(dir))
	if err != nil {
		t.Fatalf("restart on %v: %v", ports, err)
	}
	deadline := time.Now().Add(20 * time.Second)
	for {
		s := col.PollOnce(ctx)
		st.UpdateKafka(s)
		if s.Err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("still failing 20 s after the restart: %v", s.Err)
		}
		time.Sleep(100 * time.Millisecond)
	}
	doc = getDoc(t, ts.URL+"/kafka/prod/topics/orders", 200)
	if got := doc.Find("[data-live-state]").Text(); got != "live" {
		t.Errorf("after the restart the page says %q", got)
	}
	if n := doc.Find("tr.stale").Length(); n != 0 {
		t.Errorf("%d stale rows after the restart", n)
	}
	col.Close()
	c2.Close()
	ts.Close()

	deadline = time.Now().Add(5 * time.Second)
	for runtime.NumGoroutine() > baseline+2 { // the test's own server goroutines end with t.Cleanup
		if time.Now().After(deadline) {
			buf := make([]byte, 1<<20)
			t.Fatalf("%d goroutines, %d before:\n%s", runtime.NumGoroutine(), baseline, buf[:runtime.Stack(buf, true)])
		}
		time.Sleep(20 * time.Millisecond)
	}
}
