package web

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"
)

// stalledWriter is a client that does not read its answer: its first
// Write reports on writing, then blocks until release is closed. It keeps
// the write deadline the server sets through http.ResponseController.
type stalledWriter struct {
	header   http.Header
	code     int
	writing  chan<- struct{}
	release  <-chan struct{}
	once     sync.Once
	deadline time.Time
}

func (w *stalledWriter) Header() http.Header { return w.header }
func (w *stalledWriter) WriteHeader(code int) {
	if w.code == 0 {
		w.code = code
	}
}
func (w *stalledWriter) Write(b []byte) (int, error) {
	w.once.Do(func() { w.writing <- struct{}{} })
	<-w.release
	return len(b), nil
}
func (w *stalledWriter) SetWriteDeadline(d time.Time) error { w.deadline = d; return nil }

// TestSlowReadersDoNotHoldHeavySlots: as many clients as there are heavy
// slots, each stalled while reading a large plan, leave every slot free: the
// planner, key lookup and a small plan are still computed (200, not 503),
// and each stalled answer is written under a write deadline.
func TestSlowReadersDoNotHoldHeavySlots(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := newTestServer(t)
		writing, release := make(chan struct{}), make(chan struct{})
		var wg sync.WaitGroup
		var stalled []*stalledWriter
		for range cap(s.heavy) {
			w := &stalledWriter{header: http.Header{}, writing: writing, release: release}
			stalled = append(stalled, w)
			wg.Go(func() {
				s.ServeHTTP(w, httptest.NewRequest("GET", "/api/v1/plan?topic=orders:4000&parallelism=200&target=300", nil))
			})
		}
		for range stalled {
			<-writing // every stalled client has its answer being written
		}
		for _, target := range []string{"/plan?topic=a:12&parallelism=4", "/keys?keys=a&parallelism=4", "/api/v1/plan?topic=a:12&parallelism=4"} {
			rec := httptest.NewRecorder()
			s.ServeHTTP(rec, httptest.NewRequest("GET", target, nil))
			if rec.Code != http.StatusOK {
				t.Errorf("GET %s while %d clients stall reading plans = %d, want 200: %.200s", target, len(stalled), rec.Code, rec.Body)
			}
		}
		close(release)
		wg.Wait()
		for i, w := range stalled {
			if w.code != http.StatusOK || w.deadline.IsZero() {
				t.Errorf("stalled client %d: status %d, write deadline %v; want 200 under a deadline", i, w.code, w.deadline)
			}
		}
	})
}

// TestHeavyAnswersAreBounded: an answer past the bound is refused with 413
// naming its size and the bound and how to narrow the query, for the JSON
// API and the page alike; one under the bound is served.
func TestHeavyAnswersAreBounded(t *testing.T) {
	s := newTestServer(t)
	s.maxAnswer = 256 << 10
	const big = "topic=orders:20000&parallelism=1000&target=1500"
	rec := httptest.NewRecorder()
	s.ServeHTTP(rec, httptest.NewRequest("GET", "/api/v1/plan?"+big, nil))
	var e apiErrorBody
	if err := json.Unmarshal(rec.Body.Bytes(), &e); rec.Code != http.StatusRequestEntityTooLarge || err != nil ||
		!strings.Contains(e.Error, "at most 256.0 KiB") || !strings.Contains(e.Error, "the answer would be ") || !strings.Contains(e.Error, "fewer partitions") {
		t.Errorf("GET /api/v1/plan?%s over the bound = %d %q, want 413 naming the size, the bound of 256.0 KiB and fewer partitions", big, rec.Code, clip(rec.Body.String(), 300))
	}
	rec = httptest.NewRecorder()
	s.ServeHTTP(rec, httptest.NewRequest("GET", "/plan?"+big, nil))
	if rec.Code != http.StatusRequestEntityTooLarge || !strings.Contains(rec.Body.String(), "at most 256.0 KiB") || strings.Contains(rec.Header().Get("Content-Type"), "html") {
		t.Errorf("GET /plan?%s over the bound = %d %s %.200q, want a 413 text naming the bound", big, rec.Code, rec.Header().Get("Content-Type"), rec.Body)
	}
	rec = httptest.NewRecorder()
	s.ServeHTTP(rec, httptest.NewRequest("GET", "/api/v1/plan?topic=a:12&parallelism=4", nil))
	if rec.Code != http.StatusOK {
		t.Errorf("a small plan = %d, want 200", rec.Code)
	}
}

// TestPlanJSONNamesEachTopicOnce: /api/v1/plan names a topic once for
// each run of its partitions, in the layouts and in the moves, so that a
// long topic name does not make the JSON many times its page (it was 8×
// with per-partition names): it stays within twice the page, and still
// lists every partition of both layouts and every move.
func TestPlanJSONNamesEachTopicOnce(t *testing.T) {
	s := newTestServer(t)
	q := "topic=" + strings.Repeat("t", 249) + ":20000&parallelism=1000&target=1500&mode=restore"
	api, page := httptest.NewRecorder(), httptest.NewRecorder()
	s.ServeHTTP(api, httptest.NewRequest("GET", "/api/v1/plan?"+q, nil))
	s.ServeHTTP(page, httptest.NewRequest("GET", "/plan?"+q, nil))
	if api.Code != 200 || page.Code != 200 {
		t.Fatalf("GET /api/v1/plan = %d, /plan = %d", api.Code, page.Code)
	}
	t.Logf("20,000 partitions of a 249-character topic, 1000 → 1500: JSON %d bytes, page %d bytes", api.Body.Len(), page.Body.Len())
	if api.Body.Len() > 2*page.Body.Len() {
		t.Errorf("the JSON answer is %d bytes, over twice its page's %d", api.Body.Len(), page.Body.Len())
	}
	var resp planResponse
	if err := json.Unmarshal(api.Body.Bytes(), &resp); err != nil {
		t.Fatal(err)
	}
	for _, side := range []planSideJSON{resp.Now, resp.Target} {
		n := 0
		for _, st := range side.Subtasks {
			for _, run := range st.Partitions {
				n += len(run.Partitions)
			}
		}
		if n != 20000 {
			t.Errorf("%s layout lists %d partitions, want 20000", side.Layout, n)
		}
	}
	for name, d := range map[string]*planRescaleJSON{"fresh": &resp.Moves.Fresh, "restore": resp.Moves.Restore} {
		n := 0
		for _, run := range d.Moves {
			if len(run.From) != len(run.Partitions) || len(run.To) != len(run.Partitions) {
				t.Fatalf("%s moves of %s: %d partitions, %d from, %d to", name, clip(run.Topic, 10), len(run.Partitions), len(run.From), len(run.To))
			}
			n += len(run.Partitions)
		}
		if n != d.Moved || n == 0 {
			t.Errorf("%s moves list %d partitions, moved says %d", name, n, d.Moved)
		}
	}
}

// TestSlowReadersAreBoundedInBytes: rendered answers held for clients that
// do not read them count against one budget; past it, a further heavy
// request is answered 503 (it would be held too), and once the stalled
// answers are written the budget is back and the request is served.
func TestSlowReadersAreBoundedInBytes(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := newTestServer(t)
		const big = "/api/v1/plan?topic=orders:4000&parallelism=200&target=300"
		probe := httptest.NewRecorder()
		s.ServeHTTP(probe, httptest.NewRequest("GET", big, nil))
		if probe.Code != http.StatusOK {
			t.Fatalf("GET %s = %d", big, probe.Code)
		}
		// Room for two such answers, not three.
		s.answerBudget = int64(probe.Body.Len()*2 + probe.Body.Len()/2)
		writing, release := make(chan struct{}), make(chan struct{})
		var wg sync.WaitGroup
		var stalled []*stalledWriter
		for range 2 {
			w := &stalledWriter{header: http.Header{}, writing: writing, release: release}
			stalled = append(stalled, w)
			wg.Go(func() { s.ServeHTTP(w, httptest.NewRequest("GET", big, nil)) })
		}
		for range stalled {
			<-writing
		}
		rec := httptest.NewRecorder()
		s.ServeHTTP(rec, httptest.NewRequest("GET", big, nil))
		if rec.Code != http.StatusServiceUnavailable || rec.Header().Get("Retry-After") == "" || !strings.Contains(rec.Body.String(), "sent") {
			t.Errorf("a third large plan while two are held for slow readers = %d %.200q, want 503 with Retry-After", rec.Code, rec.Body)
		}
		small := httptest.NewRecorder()
		s.ServeHTTP(small, httptest.NewRequest("GET", "/api/v1/plan?topic=a:12&parallelism=4", nil))
		if small.Code != http.StatusOK {
			t.Errorf("a small plan within the budget left = %d, want 200", small.Code)
		}
		close(release)
		wg.Wait()
		if got := s.answerBytes.Load(); got != 0 {
			t.Errorf("%d answer bytes still counted after every answer was written", got)
		}
		rec = httptest.NewRecorder()
		s.ServeHTTP(rec, httptest.NewRequest("GET", big, nil))
		if rec.Code != http.StatusOK {
			t.Errorf("a large plan after the stalled answers were written = %d, want 200", rec.Code)
		}
	})
}
