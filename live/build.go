package live

import (
	"errors"
	"sort"
	"time"

	"github.com/skewscope/skewscope/collectors/flink"
)

// ErrNotFound is returned for an unknown job, vertex, cluster or topic.
var ErrNotFound = errors.New("not found")

func ageOf(at, now time.Time, stale bool, err error) Age {
	a := Age{At: at, Stale: stale, State: StateOK}
	if stale {
		a.State = StateFailing
	}
	if !at.IsZero() {
		a.Seconds = int64(now.Sub(at) / time.Second)
		if a.Seconds < 0 {
			a.Seconds = 0
		}
	}
	if err != nil {
		a.Err = err.Error()
	}
	return a
}

// itemAge is the age of an item refreshed at f.UpdatedAt.
func itemAge(f flink.Freshness, collected, now time.Time, err error) Age {
	at := f.UpdatedAt
	if at.IsZero() {
		at = collected
	}
	a := ageOf(at, now, f.Stale, err)
	if f.Stale && f.UpdatedAt.IsZero() {
		a.State = StateNeverReached
	}
	return a
}

// backendAge is the age of a Kafka cluster's or Flink endpoint's latest
// poll: failing (and stale) when it failed, never reached when no poll of
// it ever succeeded.
func backendAge(at, now time.Time, err error, reached bool) Age {
	a := ageOf(at, now, err != nil, err)
	if !reached {
		a.State, a.Stale = StateNeverReached, true
	}
	return a
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
