//go:build browser

package web

import (
	"context"
	"encoding/json"
	"net/http"
	"sync/atomic"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"
	"github.com/chromedp/chromedp"

	"github.com/skewscope/skewscope/internal/browsertest"
	"github.com/skewscope/skewscope/live"
)

// TestBrowserLiveChangeSince: live updates after the first bring only the
// sparklines' new samples; the page appends them, in place, and keeps the
// window (three samples here), so that after each update its sparklines
// and their times are those of a new rendering of the page.
func TestBrowserLiveChangeSince(t *testing.T) {
	at := time.Date(2026, 11, 30, 10, 40, 0, 0, time.UTC)
	var now atomic.Int64
	setNow := func(i int) { now.Store(at.Add(time.Duration(i)*5*time.Second + time.Second).UnixNano()) }
	clock := func() time.Time { return time.Unix(0, now.Load()).UTC() }
	setNow(1)
	st := live.New(live.Options{Now: clock, SparkPoints: 3})
	for i := range 2 {
		lossPolls(st, at, i)
	}
	srv, base := serveLiveServer(t, Options{Live: st, Now: clock, LiveInterval: 50 * time.Millisecond})
	page := base + "/jobs/" + tJob + "/vertices/" + tSource

	b := browsertest.New(t)
	if code := b.Navigate(t, page); code != 200 {
		t.Fatalf("vertex page = %d", code)
	}
	b.Do(t, chromedp.WaitVisible(`[data-testid="grid"]`))
	// The polls below must find the page subscribed.
	waitFor(t, "the page's subscription", 30*time.Second, func() bool { return len(srv.hub.Topics("vertex:")) == 1 })
	browsertest.Eval[string](t, b, `document.querySelector("[data-live-topic]").dataset.mark = "rendered"`)
	// What the page draws: each sparkline's times and samples (null: a
	// gap), by key.
	const drawn = `JSON.stringify(Object.fromEntries([...document.querySelectorAll("[data-spark]")].map(e => [e.dataset.live, e._plot ? e._plot.data : null])))`
	read := func() map[string][2][]*float64 {
		var s map[string][2][]*float64
		if err := json.Unmarshal([]byte(browsertest.Eval[string](t, b, drawn)), &s); err != nil {
			t.Fatal(err)
		}
		return s
	}
	// lastTimes reports whether every sparkline ends at time want.
	lastTimes := func(want float64) bool {
		for _, d := range read() {
			if len(d[0]) == 0 || d[0][len(d[0])-1] == nil || *d[0][len(d[0])-1] != want {
				return false
			}
		}
		return true
	}
	for i := 2; i < 6; i++ {
		setNow(i)
		lossPolls(st, at, i)
		want := float64(at.Add(time.Duration(i) * 5 * time.Second).Unix())
		hangGuard := time.Now().Add(30 * time.Second)
		for !lastTimes(want) {
			if time.Now().After(hangGuard) {
				t.Fatalf("poll %d: the sparklines do not end at %v 30 s after the update: %s", i, want, browsertest.Eval[string](t, b, drawn))
			}
			time.Sleep(50 * time.Millisecond)
		}
		got := read()
		doc := getDoc(t, page, 200)
		var times []float64
		if err := json.Unmarshal([]byte(doc.Find("[data-spark-axis]").AttrOr("data-spark-axis", "")), &times); err != nil || len(times) != 3 {
			t.Fatalf("poll %d: a new rendering's times %v (%v), want 3", i, times, err)
		}
		n := 0
		doc.Find("[data-spark]").Each(func(_ int, s *goquery.Selection) {
			n++
			var xs []float64
			if err := json.Unmarshal([]byte(s.AttrOr("data-spark", "")), &xs); err != nil {
				t.Fatal(err)
			}
			k := s.AttrOr("data-live", "")
			d := got[k]
			if len(d[0]) != len(times) || len(d[1]) != len(xs) || len(xs) != len(times) {
				t.Errorf("poll %d: %s drawn %d times and %d samples, a new rendering has %d and %d", i, k, len(d[0]), len(d[1]), len(times), len(xs))
				return
			}
			for j := range xs {
				wantY := (*float64)(nil)
				if xs[j] >= 0 {
					wantY = &xs[j]
				}
				if *d[0][j] != times[j] || (d[1][j] == nil) != (wantY == nil) || (wantY != nil && *d[1][j] != *wantY) {
					t.Errorf("poll %d: %s sample %d drawn at %v as %v, a new rendering has %v at %v", i, k, j, *d[0][j], d[1][j], xs[j], times[j])
				}
			}
		})
		if n != len(got) || n < 4 {
			t.Fatalf("poll %d: the page draws %d sparklines, a new rendering has %d", i, len(got), n)
		}
	}
	if mark := browsertest.Eval[string](t, b, `document.querySelector("[data-live-topic]").dataset.mark || ""`); mark != "rendered" {
		t.Error("the page was fetched again; the updates should have applied in place")
	}
	b.NoConsoleErrors(t)
}

// serveLiveServer is serveLive, with the server.
func serveLiveServer(t *testing.T, opts Options) (*Server, string) {
	t.Helper()
	var h atomic.Pointer[Server]
	base := browsertest.StartServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { h.Load().ServeHTTP(w, r) }))
	opts.WebSocket.AllowedOrigins = append(opts.WebSocket.AllowedOrigins, base)
	s, err := NewServer(opts)
	if err != nil {
		t.Fatal(err)
	}
	s.SetReady(true)
	h.Store(s)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { s.Run(ctx); close(done) }()
	t.Cleanup(func() { cancel(); <-done })
	return s, base
}
