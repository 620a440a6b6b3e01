package app

import (
	"context"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/skewscope/skewscope/assign"
	"github.com/skewscope/skewscope/collectors/flink"
	"github.com/skewscope/skewscope/collectors/kafka"
	"github.com/skewscope/skewscope/internal/fakejm"
	"github.com/skewscope/skewscope/internal/linkout"
)

// TestFlinkNamingAPartitionKafkaLacksRereadsTheMetadata: the dashboard as
// New wires it, over a kfake cluster and a fake JobManager whose source
// reads orders-0..4. Kafka's metadata was read while orders had 3
// partitions; after the topic grows, the Flink poll that names orders-3
// and -4 makes the next Kafka poll read the metadata again, instead of
// keeping the 3 partitions for the rest of the minute.
func TestFlinkNamingAPartitionKafkaLacksRereadsTheMetadata(t *testing.T) {
	kc, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(3, "orders"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(kc.Close)
	jm, err := fakejm.New(fakejm.Config{Jobs: 1, Parallelism: 2, Topics: []assign.Topic{{Name: "orders", Partitions: 5}}})
	if err != nil {
		t.Fatal(err)
	}
	js := httptest.NewServer(jm)
	t.Cleanup(js.Close)

	a, err := New(Config{
		Kafka: []kafka.Config{{Name: "prod", Brokers: kc.ListenAddrs(), Topics: []string{"orders"}}},
		Flink: []flink.Config{{Name: "jm", URL: js.URL, Kafka: "prod"}},
	}, nil)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	t.Cleanup(a.Close)
	ctx := context.Background()
	partitions := func() int {
		tv, err := a.Store.State().Topic("prod", "orders")
		if err != nil {
			t.Fatalf("Topic(prod, orders): %v", err)
		}
		return len(tv.Partitions)
	}
	a.Kafka[0].PollOnce(ctx)
	if n := partitions(); n != 3 {
		t.Fatalf("first Kafka poll: orders has %d partitions, want 3", n)
	}

	cl, err := kgo.NewClient(kgo.SeedBrokers(kc.ListenAddrs()...))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	if _, err := kadm.NewClient(cl).CreatePartitions(ctx, 2, "orders"); err != nil {
		t.Fatal(err)
	}
	a.Kafka[0].PollOnce(ctx)
	if n := partitions(); n != 3 {
		t.Fatalf("second Kafka poll, nothing hinted: orders has %d partitions, want the metadata's 3 (read once a minute)", n)
	}
	if s := a.Flink[0].PollOnce(ctx); s.Err != nil {
		t.Fatalf("Flink poll: %v", s.Err)
	}
	a.Kafka[0].PollOnce(ctx)
	if n := partitions(); n != 5 {
		t.Errorf("the Kafka poll after Flink named orders-3 and -4: orders has %d partitions, want 5", n)
	}
}

// TestLinksOutReachThePages: the links into the Flink Web UI that New is
// given are the ones the job page shows; an endpoint without any (the
// sandbox's) shows none.
func TestLinksOutReachThePages(t *testing.T) {
	jm, err := fakejm.New(fakejm.Config{Jobs: 1, Parallelism: 2, Topics: []assign.Topic{{Name: "orders", Partitions: 4}}})
	if err != nil {
		t.Fatal(err)
	}
	js := httptest.NewServer(jm)
	t.Cleanup(js.Close)
	ui, errs := linkout.NewFlink(js.URL, linkout.FlinkTemplates{})
	if errs != nil {
		t.Fatal(errs)
	}
	for _, tc := range []struct {
		name    string
		flinkUI map[string]linkout.Flink
		want    bool
	}{{"configured", map[string]linkout.Flink{"jm": ui}, true}, {"none", nil, false}} {
		a, err := New(Config{Flink: []flink.Config{{Name: "jm", URL: js.URL}}, FlinkUI: tc.flinkUI}, nil)
		if err != nil {
			t.Fatalf("New: %v", err)
		}
		t.Cleanup(a.Close)
		if s := a.Flink[0].PollOnce(context.Background()); s.Err != nil {
			t.Fatalf("Flink poll: %v", s.Err)
		}
		jobs := a.Store.State().Overview().Jobs
		if len(jobs) != 1 {
			t.Fatalf("%s: %d jobs, want 1", tc.name, len(jobs))
		}
		rec := httptest.NewRecorder()
		a.Server.ServeHTTP(rec, httptest.NewRequest("GET", "/jobs/"+jobs[0].ID, nil))
		link := `href="` + js.URL + `/#/job/running/` + jobs[0].ID + `/overview"`
		if got := strings.Contains(rec.Body.String(), link); got != tc.want || rec.Code != 200 {
			t.Errorf("%s: job page %d, has %s: %v, want 200, %v", tc.name, rec.Code, link, got, tc.want)
		}
	}
}
