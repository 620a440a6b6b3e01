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

	ov := s.Overview()
	got := map[string]Age{}
	for _, c := range ov.Clusters {
		got["kafka "+c.Name] = c.Age
	}
	for _, e := range ov.Endpoints {
		got["flink "+e.Name] = e.Age
	}
	for name, want := range map[string]struct {
		state string
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
