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

// backendAge is the age of a Kafka cluster's or Flink endpoint's data:
// good is when its latest successful poll started (ok false when none
// did), tried when its latest poll started, err that poll's error. It is
// failing (and stale) when the latest poll failed, never reached (stale,
// At zero) when no poll ever succeeded; At and Seconds are always those
// of the data, not of the latest try.
func backendAge(good time.Time, ok bool, tried, now time.Time, err error) Age {
	var a Age
	if ok {
		a = ageOf(good, now, err != nil, err)
	} else {
		a = ageOf(time.Time{}, now, true, err)
		a.State = StateNeverReached
	}
	a.Tried = tried
	return a
}

// fresh reports whether an age is of data from the latest poll.
func (a Age) fresh() bool { return a.State == StateOK && !a.Stale && a.Err == "" }

// within returns the age of an item of a backend: the item's own age
// while the backend is fresh; otherwise stale, failing like its backend,
// and no newer than the backend's data (an item carried over from the last
// good poll is that old, whatever poll carried it).
func within(item, backend Age) Age {
	if backend.fresh() {
		return item
	}
	out := item
	out.Stale = true
	if out.State == StateOK {
		out.State = backend.State
	}
	if out.Err == "" {
		out.Err = backend.Err
	}
	if out.At.IsZero() || out.At.After(backend.At) {
		out.At, out.Seconds = backend.At, backend.Seconds
	}
	return out
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
