package views

import "github.com/skewscope/skewscope/internal/bidi"

// Isolate wraps a name from a backend or the configuration (job, vertex,
// topic, group, cluster or endpoint name) in Unicode first-strong isolates
// (U+2068 … U+2069) when it holds right-to-left characters or bidi
// controls, so that a right-to-left override inside the name cannot reorder
// the text around it. It is for places where no <bdi> element can go: the
// document <title>, attributes such as title=, and sentences built as one
// string. In HTML content, put the name in <bdi> instead. It is the one
// isolation helper: every package that builds such text uses it.
// (Backend texts reach the views with their bidi controls escaped,
// live.Store's sanitising; names typed into the planner need not.)
func Isolate(s string) string {
	for _, r := range s {
		if bidi.IsRightToLeft(r) || bidi.IsControl(r) {
			return "\u2068" + s + "\u2069"
		}
	}
	return s
}
