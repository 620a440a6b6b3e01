package web

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/skewscope/skewscope/live"
	"github.com/skewscope/skewscope/views"
)

// runLive publishes every view to its websocket topic after each store
// update, at most once per minInterval counted from the start of the last
// round, so that an update waits at most minInterval however long a round
// takes. A round waits for an update that is under way when it is due
// (live.Store.Updating), for at most minInterval: the collectors hand in
// their polls moments apart (a Kafka poll, then a Flink poll), and one
// round carries both.
func (s *Server) runLive(ctx context.Context, minInterval time.Duration) {
	if s.live == nil || s.hub == nil {
		return
	}
	settle := min(minInterval/100, 10*time.Millisecond)
	var last time.Time
	for {
		select {
		case <-ctx.Done():
			return
		case <-s.live.Changed():
		}
		due := time.Now()
		select {
		case <-ctx.Done():
			return
		case <-time.After(max(settle, minInterval-time.Since(last))):
		}
		for s.live.Updating() && time.Since(due) < minInterval {
			select {
			case <-ctx.Done():
				return
			case <-s.live.Changed():
			case <-time.After(minInterval - time.Since(due)):
			}
		}
		// The updates that came while waiting are in this round.
		select {
		case <-s.live.Changed():
		default:
		}
		last = time.Now()
		s.publishAll()
	}
}

// publishAll builds and publishes the pages somebody is subscribed to,
// with the builders that render them, so that an update carries the texts
// the page shows. Every page of one round is built from the same State.
func (s *Server) publishAll() {
	st, hub := s.live.State(), s.hub
	defer s.forgetUnwatched()
	l := views.Layout{Base: s.prefix}
	pl := s.pageLinks(l)
	now := s.now()
	if hub.Subscribed(overviewTopic) {
		s.publish(newOverviewPage(pl, st.Overview()))
	}
	for _, j := range st.JobRefs() {
		topic := jobTopic(j.ID)
		if !hub.Subscribed(topic) || s.upToDate(topic, st.JobSeq(j.ID), now) {
			continue
		}
		if jv, err := st.Job(j.Endpoint, j.ID); err == nil {
			s.publishFrom(newJobPage(pl, jv, replacedBanner(l, jv.ReplacedBy, now, false)), st.JobSeq(j.ID), now)
		}
	}
	// Topics that differ only in their page's parts or grid share a view:
	// it is built once per cycle for each (job, vertex, query).
	built := make(map[vertexViewKey]builtVertex)
	for _, topic := range hub.Topics("vertex:") {
		// An embedded page's topic is its page's with :embed: its update
		// is built as that page is (no prediction card, no explanations).
		page, embedded := strings.CutSuffix(topic, embedOption)
		job, vertex, q, parts, grid, ok := parseVertexTopic(page)
		if !ok {
			continue // a topic no page subscribes to
		}
		if s.upToDate(topic, st.JobSeq(job), now) {
			continue
		}
		k := keyOfVertexView(job, vertex, q)
		b, ok := built[k]
		if !ok {
			b.vv, b.err = st.Vertex(job, vertex, q)
			s.vertexViews.Add(1)
			built[k] = b
		}
		if b.err == nil {
			s.publishFrom(newVertexPage(vertexPageInput{update: true, links: pageLinks{base: pl.base, embed: embedded}, topic: topic, parts: parts, grid: grid, replaced: replacedBanner(l, b.vv.ReplacedBy, now, true)}, b.vv), st.JobSeq(job), now)
		}
	}
	for _, t := range st.Backends().Topics {
		topic := topicTopic(t.Cluster, t.Name)
		if !hub.Subscribed(topic) || s.upToDate(topic, st.ClusterSeq(t.Cluster), now) {
			continue
		}
		if tv, err := st.Topic(t.Cluster, t.Name); err == nil {
			s.publishFrom(newTopicPage(pl, tv), st.ClusterSeq(t.Cluster), now)
		}
	}
}

// publish sends a page's update to its topic. A model that names one
// element twice is a builder's bug: it is logged, and the page keeps its
// last update rather than a wrong one.
//
// Sparklines are sent once, then appended to: an update that continues
// the topic's last one goes as a change whose sparklines carry only the
// new samples (views.ChangeSince), to the sockets that were sent that
// last update; the hub sends the others the whole update.
func (s *Server) publish(p views.LivePage) { s.publishFrom(p, 0, time.Time{}) }

// republishAfter is how long a page whose figures did not change goes
// without an update: its ages move on, and a backend that stopped
// answering shows as stale.
const republishAfter = 10 * time.Second

// upToDate reports whether the topic's last update was built from the
// same update of its job or cluster (live.State.JobSeq, ClusterSeq) less
// than republishAfter ago: publishing scales with what changed, so that a
// poll of one job's endpoint or cluster rebuilds that job's pages, not
// every page.
func (s *Server) upToDate(topic string, from uint64, now time.Time) bool {
	s.lastMu.Lock()
	defer s.lastMu.Unlock()
	last, ok := s.lastSent[topic]
	return ok && from != 0 && last.from == from && now.Sub(last.at) < republishAfter
}

// publishFrom is publish of a page built from update from of its job or
// cluster, at now.
func (s *Server) publishFrom(p views.LivePage, from uint64, now time.Time) {
	topic := p.LiveHead().Topic
	u, err := views.UpdateOf(p)
	if err != nil {
		s.log.Error("live update not published", "topic", topic, "err", err)
		return
	}
	s.lastMu.Lock()
	prev, had := s.lastSent[topic]
	s.pubSeq++
	seq := s.pubSeq
	s.lastSent[topic] = sentUpdate{seq: seq, u: u, from: from, at: now}
	s.lastMu.Unlock()
	var change any
	if had {
		if c, ok := views.ChangeSince(prev.u, u, sparkAxisKey); ok {
			change = c
		}
	}
	s.hub.PublishChange(topic, seq, prev.seq, u, change)
}

// sentUpdate is the last update published to a topic, its number, and
// the job's or cluster's update it was built from at what time (0 and
// zero when not known).
type sentUpdate struct {
	seq  uint64
	u    views.Update
	from uint64
	at   time.Time
}

// forgetUnwatched drops the last updates of the topics nobody watches.
func (s *Server) forgetUnwatched() {
	s.lastMu.Lock()
	defer s.lastMu.Unlock()
	for t := range s.lastSent {
		if !s.hub.Subscribed(t) {
			delete(s.lastSent, t)
		}
	}
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
