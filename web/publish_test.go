package web

import (
	"context"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/websocket"
)

// TestPublishBuildsOneViewPerQuery: vertex topics that differ only in
// their page's parts or grid share one live view per publish cycle, and
// each topic is encoded once however many sockets watch it: the cost of a
// cycle follows the distinct views, not the sockets or the topics.
func TestPublishBuildsOneViewPerQuery(t *testing.T) {
	at := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	st := liveStore(t, at)
	s, err := NewServer(Options{Live: st, WebSocket: HubOptions{AllowNoOrigin: true}})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { s.hub.Run(ctx); close(done) }() // no runLive: the test publishes
	ts := httptest.NewServer(s)
	t.Cleanup(func() { ts.Close(); cancel(); <-done })

	topics := []string{
		vertexTopic(tJob, tSource, "lag", nil, 0, gridQuery{}),
		vertexTopic(tJob, tSource, "lag", nil, partGrid, gridQuery{}),
		vertexTopic(tJob, tSource, "lag", nil, 0, gridQuery{Sort: "lag"}),
		vertexTopic(tJob, tSource, "lag", nil, 0, gridQuery{Topic: "orders"}),
		vertexTopic(tJob, tSource, "lag", []int{2, 4}, 0, gridQuery{}),        // another query
		vertexTopic(tJob, tSource, "lag", []int{2, 4}, partGrid, gridQuery{}), // and its parts
		vertexTopic(tJob, tKeyed, "lag", nil, 0, gridQuery{Sort: "busy"}),     // another vertex
		vertexTopic(tJob, tKeyed, "lag", nil, partFigures, gridQuery{}),       // and its parts
	}
	for _, topic := range topics {
		if _, _, _, _, _, ok := parseVertexTopic(topic); !ok {
			t.Fatalf("parseVertexTopic(%q) refused it", topic)
		}
	}
	for range 5 {
		c, _, err := websocket.DefaultDialer.Dial("ws"+strings.TrimPrefix(ts.URL, "http")+"/ws", nil)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		subscribe(t, c, topics...)
	}
	s.publishAll()
	if got := s.vertexViews.Load(); got != 3 {
		t.Errorf("%d vertex views built for %d topics of 3 (job, vertex, query), want 3", got, len(topics))
	}
	if got := s.hub.Stats().Encoded; got != uint64(len(topics)) {
		t.Errorf("Encoded = %d for %d topics watched by 5 sockets each, want %d", got, len(topics), len(topics))
	}
}
