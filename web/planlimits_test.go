package web

import (
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
)

// TestPlannerBoundsSubtasks: the planner draws one grid row per subtask of
// both sides, so parallelism + target is bounded; the message names the
// parameter and the bound, and a plan just under it still renders.
func TestPlannerBoundsSubtasks(t *testing.T) {
	s := newTestServer(t)
	for _, tc := range []struct {
		query string
		code  int
		field string
	}{
		{"topic=a:50000&parallelism=32768&target=1", 400, "parallelism"},
		{"topic=a:10&parallelism=1&target=32768", 400, "target"},
		{"topic=a:10&parallelism=4096&target=4097", 400, "target"},
		{"topic=a:50000&parallelism=" + strconv.Itoa(maxPlannerSubtasks-1) + "&target=1", 200, ""},
		{"topic=a:50000&parallelism=4096&target=4096", 200, ""},
	} {
		rec, doc := get(t, s, "/plan?"+tc.query)
		if rec.Code != tc.code {
			t.Errorf("GET /plan?%s = %d, want %d", tc.query, rec.Code, tc.code)
			continue
		}
		if tc.field == "" {
			continue
		}
		msg := doc.Find(testid("err-" + tc.field)).Text()
		if want := strconv.Itoa(maxPlannerSubtasks); !strings.Contains(msg, want) || !strings.Contains(msg, "parallelism + target") {
			t.Errorf("GET /plan?%s: message on %s = %q, want it to name parallelism + target and the bound %s", tc.query, tc.field, msg, want)
		}
	}
}

// TestHeavyRendersAreBounded: with every render slot taken, a planner
// request waits briefly, then gets 503 with Retry-After; a slot freed while
// it waits lets it through. Cheap pages never wait.
func TestHeavyRendersAreBounded(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := newTestServer(t)
		for range cap(s.heavy) {
			s.heavy <- struct{}{}
		}
		serve := func(target string) *httptest.ResponseRecorder {
			rec := httptest.NewRecorder()
			s.ServeHTTP(rec, httptest.NewRequest("GET", target, nil))
			return rec
		}
		if rec := serve("/healthz"); rec.Code != http.StatusOK {
			t.Errorf("GET /healthz with render slots full = %d, want 200", rec.Code)
		}
		for _, target := range []string{"/plan?topic=a:12&parallelism=4", "/keys?keys=a&parallelism=4", "/api/v1/assignment?topic=a:12&parallelism=4"} {
			rec := serve(target)
			if rec.Code != http.StatusServiceUnavailable || rec.Header().Get("Retry-After") == "" {
				t.Errorf("GET %s with render slots full = %d, Retry-After %q; want 503 with Retry-After", target, rec.Code, rec.Header().Get("Retry-After"))
			}
			if !strings.Contains(rec.Body.String(), "busy") {
				t.Errorf("GET %s with render slots full: body %q, want it to say the server is busy", target, rec.Body)
			}
		}
		// A slot freed while the request queues lets it through.
		var wg sync.WaitGroup
		var rec *httptest.ResponseRecorder
		wg.Go(func() { rec = serve("/plan?topic=a:12&parallelism=4") })
		synctest.Wait() // the request is queued
		<-s.heavy
		wg.Wait()
		if rec.Code != http.StatusOK {
			t.Errorf("GET /plan after a slot freed = %d, want 200", rec.Code)
		}
	})
}
