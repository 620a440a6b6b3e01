package web

import (
	"context"
	"time"

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
	for _, topic := range hub.Topics("vertex:") {
		job, vertex, q, parts, grid, ok := parseVertexTopic(topic)
		if !ok {
			continue // a topic no page subscribes to
		}
		if vv, err := st.Vertex(job, vertex, q); err == nil {
			s.publish(newVertexPage(vertexPageInput{links: pl, topic: topic, parts: parts, grid: grid, replaced: replacedBanner(l, vv.ReplacedBy, now, true)}, vv))
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
