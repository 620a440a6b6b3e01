package flink

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
)

// countingHandler counts the records at Warn and above, by message.
type countingHandler struct {
	mu    *sync.Mutex
	byMsg map[string]int
	attrs map[string][]string // message → "key=value" of the last record
	with  []string
}

func newCountingHandler() *countingHandler {
	return &countingHandler{mu: &sync.Mutex{}, byMsg: map[string]int{}, attrs: map[string][]string{}}
}

func (h *countingHandler) Enabled(context.Context, slog.Level) bool { return true }
func (h *countingHandler) WithAttrs(as []slog.Attr) slog.Handler {
	c := *h
	c.with = slices.Clone(h.with)
	for _, a := range as {
		c.with = append(c.with, a.Key+"="+a.Value.String())
	}
	return &c
}
func (h *countingHandler) WithGroup(string) slog.Handler { return h }
func (h *countingHandler) Handle(_ context.Context, r slog.Record) error {
	if r.Level < slog.LevelWarn {
		return nil
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	h.byMsg[r.Message]++
	kv := slices.Clone(h.with)
	r.Attrs(func(a slog.Attr) bool { kv = append(kv, a.Key+"="+a.Value.String()); return true })
	h.attrs[r.Message] = kv
	return nil
}

func (h *countingHandler) total() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	n := 0
	for _, c := range h.byMsg {
		n += c
	}
	return n
}

// TestPollLogsRepeatedErrorsOnce: many listed jobs whose details fail give
// one warning per kind of failure per poll, with the count and the first.
func TestPollLogsRepeatedErrorsOnce(t *testing.T) {
	const jobs = 2000
	f := newFakeFlink(t, "2.2.1")
	var list strings.Builder
	list.WriteString(`{"jobs":[`)
	for i := range jobs {
		if i > 0 {
			list.WriteString(",")
		}
		fmt.Fprintf(&list, `{"jid":"%032x","name":"job-%d","state":"RUNNING","start-time":1,"end-time":-1}`, i+1, i)
	}
	list.WriteString(`]}`)
	f.setFault("/jobs/overview", func(w http.ResponseWriter, r *http.Request) { w.Write([]byte(list.String())) })
	h := newCountingHandler()
	c, err := newCollector(Config{Name: "test", URL: "http://flink.test"}, slog.New(h),
		WithHTTPClient(&http.Client{Transport: handlerTransport{f}})) // unknown job ids: 404
	if err != nil {
		t.Fatal(err)
	}
	c.client.pace = nil // about the logs, not the request rate
	t.Cleanup(c.Close)
	for poll := 1; poll <= 2; poll++ {
		s := c.PollOnce(context.Background())
		if len(s.Jobs) != jobs || s.Jobs[0].Err == nil {
			t.Fatalf("poll %d: %d jobs, first err %v; want %d failing jobs", poll, len(s.Jobs), s.Jobs[0].Err, jobs)
		}
		if got := h.total(); got != poll {
			t.Errorf("after poll %d: %d warnings (%v), want %d: one per kind per poll", poll, got, h.byMsg, poll)
		}
	}
	for msg, kv := range h.attrs {
		if !strings.Contains(strings.Join(kv, " "), fmt.Sprint("count=", jobs)) || !strings.Contains(strings.Join(kv, " "), "job_id=") {
			t.Errorf("%q has attrs %v, want count=%d and the first job_id", msg, kv, jobs)
		}
	}
}
