package live

import "sync/atomic"

// viewCounter counts the page views (vertex, job, topic and overview
// views) a store and its read copies built: /metrics exports it, and a
// test tells from it that a path, such as a scrape, built none.
type viewCounter = atomic.Uint64

// countView counts one page view built.
func (s *picture) countView() {
	if s.views != nil {
		s.views.Add(1)
	}
}

// ViewsBuilt is the number of page views the store and its read copies
// have built.
func (s *picture) ViewsBuilt() uint64 {
	if s.views == nil {
		return 0
	}
	return s.views.Load()
}
