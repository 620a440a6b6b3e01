package web

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/skewscope/skewscope/collectors/flink"
	"github.com/skewscope/skewscope/collectors/kafka"
	"github.com/skewscope/skewscope/live"
	"github.com/skewscope/skewscope/sandbox"
)

// sandboxFeed is a running sandbox with the real collectors on it and the
// store they feed, as the dashboard wires them for `make run`.
type sandboxFeed struct {
	sb    *sandbox.Sandbox
	kafka kafka.Config
	kc    *kafka.Collector
	fc    *flink.Collector
	st    *live.Store
}

// startSandboxFeed starts the sandbox with opts and the collectors
// (kafkaCfg, when not nil, adjusts the Kafka collector's configuration);
// everything stops when the test ends. Nothing polls until poll or
// pollInBackground is called.
func startSandboxFeed(t *testing.T, opts sandbox.Options, kafkaCfg func(*kafka.Config)) *sandboxFeed {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	sb, err := sandbox.Start(ctx, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sb.Close() })
	f := &sandboxFeed{sb: sb, kafka: kafka.Config{Name: "sandbox", Brokers: sb.KafkaBrokers()}}
	if kafkaCfg != nil {
		kafkaCfg(&f.kafka)
	}
	if f.kc, err = kafka.NewKafkaCollector(f.kafka, nil); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(f.kc.Close)
	if f.fc, err = flink.NewCollector(flink.Config{Name: "sandbox", URL: sb.FlinkURL(), Kafka: "sandbox"}, nil); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(f.fc.Close)
	f.st = live.New(live.Options{EndpointKafka: map[string]string{"sandbox": "sandbox"}, Kafka: []string{"sandbox"}, Flink: []live.Endpoint{{Name: "sandbox"}}})
	return f
}

// poll runs one Kafka and one Flink poll into the store.
func (f *sandboxFeed) poll(ctx context.Context) {
	f.st.UpdateKafka(f.kc.PollOnce(ctx))
	f.st.UpdateFlink(f.fc.PollOnce(ctx))
}

// pollInBackground polls every half second until the test ends.
func (f *sandboxFeed) pollInBackground(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Go(func() {
		for ctx.Err() == nil {
			f.poll(ctx)
			select {
			case <-ctx.Done():
			case <-time.After(500 * time.Millisecond): // paces the polls; nothing waits on it
			}
		}
	})
	t.Cleanup(func() { cancel(); wg.Wait() })
}

// job is the sandbox job called name, as it runs now.
func (f *sandboxFeed) job(t *testing.T, name string) sandbox.JobInfo {
	t.Helper()
	for _, j := range f.sb.Jobs() {
		if j.Name == name && j.State == "RUNNING" {
			return j
		}
	}
	t.Fatalf("the sandbox runs no %s job: %+v", name, f.sb.Jobs())
	return sandbox.JobInfo{}
}
