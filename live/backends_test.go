package live

import (
	"errors"
	"testing"
	"time"

	"github.com/skewscope/skewscope/collectors/flink"
	"github.com/skewscope/skewscope/collectors/kafka"
)

// TestBackendStates: a backend no poll ever reached, and one whose latest
// poll failed, are not shown fresh.
func TestBackendStates(t *testing.T) {
	down := errors.New("dial tcp: connection refused")
	now := t0.Add(3 * time.Second)
	s := New(Options{Now: func() time.Time { return now }})
	s.UpdateKafka(&kafka.Snapshot{Cluster: "never", CollectedAt: t0, Err: down})
	s.UpdateKafka(kafkaSnap(t0, ends(10))) // "prod", fine
	s.UpdateFlink(&flink.Snapshot{Endpoint: "never", CollectedAt: t0, Err: down})
	s.UpdateFlink(flinkSnap(t0))                                               // "jm", fine …
	s.UpdateFlink(&flink.Snapshot{Endpoint: "jm", CollectedAt: t0, Err: down}) // … then failing

	ov := s.State().Overview()
	got := map[string]Age{}
	for _, c := range ov.Clusters {
		got["kafka "+c.Name] = c.Age
	}
	for _, e := range ov.Endpoints {
		got["flink "+e.Name] = e.Age
	}
	for name, want := range map[string]struct {
		state BackendState
		stale bool
	}{
		"kafka never": {StateNeverReached, true},
		"kafka prod":  {StateOK, false},
		"flink never": {StateNeverReached, true},
		"flink jm":    {StateFailing, true},
	} {
		if a := got[name]; a.State != want.state || a.Stale != want.stale {
			t.Errorf("%s: state %q, stale %v; want %q, %v", name, a.State, a.Stale, want.state, want.stale)
		}
	}
}

// TestConfiguredBackendsBeforeTheirFirstPoll: a configured backend is on
// the overview before any snapshot of it, not yet polled and not fresh;
// once its first poll has failed it is never reached, with the error.
func TestConfiguredBackendsBeforeTheirFirstPoll(t *testing.T) {
	now := t0.Add(3 * time.Second)
	s := New(Options{Now: func() time.Time { return now }, Kafka: []string{"prod", "lost"},
		Flink: []Endpoint{{Name: "jm", URL: "http://jm:8081"}, {Name: "gone", URL: "http://gone:8081"}}})
	state := func() map[string]Age {
		got := map[string]Age{}
		for _, ov := range []OverviewView{s.State().Overview(), s.State().Backends()} {
			for _, c := range ov.Clusters {
				got["kafka "+c.Name] = c.Age
			}
			for _, e := range ov.Endpoints {
				got["flink "+e.Name+" "+e.URL] = e.Age
			}
			if len(ov.Clusters) != 2 || len(ov.Endpoints) != 2 {
				t.Errorf("overview lists %d clusters and %d endpoints, want 2 and 2: %+v", len(ov.Clusters), len(ov.Endpoints), ov)
			}
		}
		return got
	}
	for name, a := range state() {
		if a != (Age{Stale: true, State: StateNotPolled}) {
			t.Errorf("%s before any poll = %+v, want not yet polled, stale", name, a)
		}
	}

	down := errors.New("dial tcp: connection refused")
	s.UpdateKafka(kafkaSnap(t0, ends(10))) // "prod"
	s.UpdateKafka(&kafka.Snapshot{Cluster: "lost", CollectedAt: t0, Err: down})
	s.UpdateFlink(flinkSnap(t0)) // "jm"
	s.UpdateFlink(&flink.Snapshot{Endpoint: "gone", URL: "http://gone:8081", CollectedAt: t0, Err: down})
	got := state()
	for name, want := range map[string]Age{
		"kafka prod":                  {At: t0, Seconds: 3, Tried: t0, State: StateOK},
		"kafka lost":                  {Tried: t0, Stale: true, Err: down.Error(), State: StateNeverReached}, // no data: no age
		"flink jm ":                   {At: t0, Seconds: 3, Tried: t0, State: StateOK},
		"flink gone http://gone:8081": {Tried: t0, Stale: true, Err: down.Error(), State: StateNeverReached},
	} {
		if a, ok := got[name]; !ok || a != want {
			t.Errorf("%s after its first poll = %+v (listed %v), want %+v", name, a, ok, want)
		}
	}
}

// TestFailingBackendDataAge: a JobManager and a Kafka cluster that answer
// nothing for 75 s after a good poll. Their age on the overview is that of
// their data (the good poll), not of the latest try, and every job and
// topic row says it is stale with that age, also a job the failing poll
// handed in without its own freshness.
func TestFailingBackendDataAge(t *testing.T) {
	clock := t0
	s := New(Options{Now: func() time.Time { return clock }})
	job := flink.JobSnapshot{ID: "aa", Name: "enrich", State: "RUNNING", NumRestarts: -1, Freshness: flink.Freshness{UpdatedAt: t0}}
	s.UpdateKafka(kafkaSnap(t0, ends(10)))
	s.UpdateFlink(flinkSnap(t0, job))
	down := errors.New("flink GET /jobs/overview: 500 Internal Server Error")
	for at := t0.Add(15 * time.Second); !at.After(t0.Add(75 * time.Second)); at = at.Add(15 * time.Second) {
		clock = at
		failed := flinkSnap(at, flink.JobSnapshot{ID: job.ID, Name: job.Name, State: job.State, NumRestarts: -1})
		failed.Err = down
		s.UpdateFlink(failed)
		ks := kafkaSnap(at, nil)
		ks.Err = errors.New("kafka: dial tcp: connection refused")
		s.UpdateKafka(ks)
	}
	clock = t0.Add(76 * time.Second)
	want := Age{At: t0, Seconds: 76, Stale: true, State: StateFailing}
	ov := s.State().Overview()
	check := func(what string, a Age) {
		t.Helper()
		if a.Err == "" {
			t.Errorf("%s: no error, want the failing poll's", what)
		}
		a.Err, a.Tried = "", time.Time{}
		if a != want {
			t.Errorf("%s = %+v, want %+v", what, a, want)
		}
	}
	if len(ov.Endpoints) != 1 || len(ov.Jobs) != 1 || len(ov.Clusters) != 1 {
		t.Fatalf("overview has %d endpoints, %d jobs, %d clusters; want 1 each", len(ov.Endpoints), len(ov.Jobs), len(ov.Clusters))
	}
	check("endpoint", ov.Endpoints[0].Age)
	if tried := ov.Endpoints[0].Age.Tried; !tried.Equal(t0.Add(75 * time.Second)) {
		t.Errorf("endpoint tried at %v, want the latest poll's start %v", tried, t0.Add(75*time.Second))
	}
	check("job row", ov.Jobs[0].Age)
	check("cluster", ov.Clusters[0].Age)
	// The failing Kafka snapshot lists no topics; the cluster's last good
	// poll's are not carried by kafkaSnap, so check a topic carried stale.
	ks := kafkaSnap(t0.Add(75*time.Second), ends(10))
	ks.Err = errors.New("kafka: dial tcp: connection refused")
	for i := range ks.Topics {
		for j := range ks.Topics[i].Partitions {
			ks.Topics[i].Partitions[j].Freshness = kafka.Freshness{UpdatedAt: t0, Stale: true}
		}
	}
	s.UpdateKafka(ks)
	ov = s.State().Overview()
	if len(ov.Topics) == 0 {
		t.Fatal("no topic rows")
	}
	for _, ts := range ov.Topics {
		check("topic "+ts.Name, ts.Age)
	}
}
