package web

import (
	"context"
	"fmt"
	"time"

	"github.com/skewscope/skewscope/live"
	"github.com/skewscope/skewscope/views"
)

// runLive publishes every view to its websocket topic after each store
// update, at most once per minInterval.
func (s *Server) runLive(ctx context.Context, minInterval time.Duration) {
	if s.live == nil || s.hub == nil {
		return
	}
	for {
		select {
		case <-ctx.Done():
			return
		case <-s.live.Changed():
		}
		s.publishAll()
		select {
		case <-ctx.Done():
			return
		case <-time.After(minInterval):
		}
	}
}

// publishAll builds and publishes the pages somebody is subscribed to,
// with the builders that render them, so that an update carries the texts
// the page shows.
func (s *Server) publishAll() {
	st, hub := s.live, s.hub
	l := views.Layout{Base: s.prefix}
	pl := linksOf(l)
	now := s.now()
	if hub.Subscribed(overviewTopic) {
		s.publish(newOverviewPage(pl, st.Overview()))
	}
	for _, j := range st.JobRefs() {
		if !hub.Subscribed(jobTopic(j.ID)) {
			continue
		}
		if jv, err := st.Job(j.Endpoint, j.ID); err == nil {
			s.publish(newJobPage(pl, jv, replacedBanner(l, jv.ReplacedBy, now, false)))
		}
	}
	// Topics that differ only in their page's parts or grid share a view:
	// it is built once per cycle for each (job, vertex, query).
	built := make(map[vertexViewKey]builtVertex)
	for _, topic := range hub.Topics("vertex:") {
		job, vertex, q, parts, grid, ok := parseVertexTopic(topic)
		if !ok {
			continue // a topic no page subscribes to
		}
		k := keyOfVertexView(job, vertex, q)
		b, ok := built[k]
		if !ok {
			b.vv, b.err = st.Vertex(job, vertex, q)
			s.vertexViews.Add(1)
			built[k] = b
		}
		if b.err == nil {
			s.publish(newVertexPage(vertexPageInput{links: pl, topic: topic, parts: parts, grid: grid, replaced: replacedBanner(l, b.vv.ReplacedBy, now, true)}, b.vv))
		}
	}
	for _, t := range st.Backends().Topics {
		if !hub.Subscribed(topicTopic(t.Cluster, t.Name)) {
			continue
		}
		if tv, err := st.Topic(t.Cluster, t.Name); err == nil {
			s.publish(newTopicPage(tv))
		}
	}
}

// publish sends a page's update to its topic. A model that names one
// element twice is a builder's bug: it is logged, and the page keeps its
// last update rather than a wrong one.
func (s *Server) publish(p views.LivePage) {
	u, err := views.UpdateOf(p)
	if err != nil {
		s.log.Error("live update not published", "topic", p.LiveHead().Topic, "err", err)
		return
	}
	s.hub.Publish(p.LiveHead().Topic, u)
}

// vertexViewKey names a vertex view as the store builds it: a job's
// vertex under one query.
type vertexViewKey struct {
	job, vertex, endpoint, color, history, highlightTopic string
	highlight                                             int
	highlightPartition                                    int32
}

func keyOfVertexView(job, vertex string, q live.VertexQuery) vertexViewKey {
	return vertexViewKey{job: job, vertex: vertex, endpoint: q.Endpoint, color: q.Color, history: fmt.Sprint(q.History),
		highlightTopic: q.HighlightTopic, highlight: q.Highlight, highlightPartition: q.HighlightPartition}
}

// builtVertex is a vertex view publishAll built in this cycle.
type builtVertex struct {
	vv  live.VertexView
	err error
}
