package fakejm

import (
	"net/http"
	"sync"
	"sync/atomic"
)

// Kind is the kind of endpoint a request was answered by.
type Kind uint8

// The kinds Stats counts.
const (
	KindOverview     Kind = iota // /overview, /config, /taskmanagers
	KindJobsOverview             // /jobs/overview
	KindJob                      // /jobs/:id, /jobs/:id/plan, /jobs/:id/config
	KindCheckpoints              // /jobs/:id/checkpoints, its details and config
	KindVertex                   // /jobs/:id/vertices/:vid
	KindBackpressure             // /jobs/:id/vertices/:vid/backpressure
	// KindMetricList is a metric endpoint without get=: the id list.
	KindMetricList
	// KindMetricValues is a metric endpoint with get=: values.
	KindMetricValues
	// KindNotFound is a 404 answer: a path or id the fake does not know.
	KindNotFound
	// KindRejected is a request Flink refuses: a request line over
	// Netty's 4096 bytes, a method other than GET, an id that does not
	// parse.
	KindRejected
	numKinds
)

var kindNames = [numKinds]string{
	"overview", "jobs-overview", "job", "checkpoints", "vertex", "backpressure",
	"metric-list", "metric-values", "not-found", "rejected",
}

// String returns the kind's name as Stats.ByKind keys it.
func (k Kind) String() string {
	if k < numKinds {
		return kindNames[k]
	}
	return "kind?"
}

// Count is a number of requests and their response body bytes.
type Count struct {
	Requests int64 `json:"requests"`
	Bytes    int64 `json:"bytes"`
}

func (c Count) sub(o Count) Count { return Count{c.Requests - o.Requests, c.Bytes - o.Bytes} }

// Stats is what a Handler answered.
type Stats struct {
	Total Count `json:"total"`
	// ByKind is keyed by Kind.String; kinds without requests are absent.
	ByKind map[string]Count `json:"by_kind"`
	// Unanswered holds the first request URIs answered 404 or refused
	// (at most maxUnanswered): what a client asked that the fake lacks.
	Unanswered []string `json:"unanswered,omitempty"`
}

// Kind returns the count of one kind.
func (s Stats) Kind(k Kind) Count { return s.ByKind[k.String()] }

// Failed is the number of requests answered 404 or refused.
func (s Stats) Failed() int64 { return s.Kind(KindNotFound).Requests + s.Kind(KindRejected).Requests }

// Sub returns the counts of s minus those of an earlier prev; Unanswered
// is s's.
func (s Stats) Sub(prev Stats) Stats {
	out := Stats{Total: s.Total.sub(prev.Total), ByKind: map[string]Count{}, Unanswered: s.Unanswered}
	for k, c := range s.ByKind {
		if d := c.sub(prev.ByKind[k]); d != (Count{}) {
			out.ByKind[k] = d
		}
	}
	return out
}

const maxUnanswered = 16

type counters struct {
	n     [numKinds]atomic.Int64
	bytes [numKinds]atomic.Int64

	mu         sync.Mutex
	unanswered []string
}

func (c *counters) add(k Kind, bytes int, r *http.Request) {
	c.n[k].Add(1)
	c.bytes[k].Add(int64(bytes))
	if k == KindNotFound || k == KindRejected {
		uri := r.URL.RequestURI()
		if len(uri) > 200 {
			uri = uri[:200] + "…"
		}
		c.mu.Lock()
		if len(c.unanswered) < maxUnanswered {
			c.unanswered = append(c.unanswered, uri)
		}
		c.mu.Unlock()
	}
}

func (c *counters) snapshot() Stats {
	s := Stats{ByKind: map[string]Count{}}
	for k := range numKinds {
		n := Count{c.n[k].Load(), c.bytes[k].Load()}
		if n.Requests == 0 {
			continue
		}
		s.ByKind[k.String()] = n
		s.Total.Requests += n.Requests
		s.Total.Bytes += n.Bytes
	}
	c.mu.Lock()
	s.Unanswered = append([]string(nil), c.unanswered...)
	c.mu.Unlock()
	return s
}

func (c *counters) reset() {
	for k := range numKinds {
		c.n[k].Store(0)
		c.bytes[k].Store(0)
	}
	c.mu.Lock()
	c.unanswered = nil
	c.mu.Unlock()
}
