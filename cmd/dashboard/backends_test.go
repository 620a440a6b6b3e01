package main

import (
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"
)

// closedPort returns a loopback address nothing listens on: a port the
// system just handed out and that was closed again.
func closedPort(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	return addr
}

type backendRow struct {
	Name  string
	State string
	Err   string
}

// overviewBackends reads the clusters and endpoints of /api/v1/overview.
func overviewBackends(t *testing.T, base string) (clusters, endpoints []backendRow) {
	t.Helper()
	resp, err := http.Get(base + "/api/v1/overview")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("GET /api/v1/overview = %d, want 200", resp.StatusCode)
	}
	type age struct {
		State string `json:"state"`
		Stale bool   `json:"stale"`
		Err   string `json:"error"`
	}
	var ov struct {
		Clusters []struct {
			Name string `json:"name"`
			Age  age    `json:"freshness"`
		} `json:"clusters"`
		Endpoints []struct {
			Name string `json:"name"`
			Age  age    `json:"freshness"`
		} `json:"endpoints"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&ov); err != nil {
		t.Fatal(err)
	}
	for _, c := range ov.Clusters {
		if !c.Age.Stale || c.Age.State == "ok" {
			t.Errorf("kafka cluster %s is shown fresh: %+v", c.Name, c.Age)
		}
		clusters = append(clusters, backendRow{c.Name, c.Age.State, c.Age.Err})
	}
	for _, e := range ov.Endpoints {
		if !e.Age.Stale || e.Age.State == "ok" {
			t.Errorf("flink endpoint %s is shown fresh: %+v", e.Name, e.Age)
		}
		endpoints = append(endpoints, backendRow{e.Name, e.Age.State, e.Age.Err})
	}
	return clusters, endpoints
}

// overviewPageStates reads the state cell of each backend row of the
// overview page, by table and backend name.
func overviewPageStates(t *testing.T, base string) map[string]string {
	t.Helper()
	resp, err := http.Get(base + "/")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	doc, err := goquery.NewDocumentFromReader(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, table := range []string{"endpoints", "clusters"} {
		doc.Find("[data-testid=" + table + "] tbody tr").Each(func(_ int, row *goquery.Selection) {
			out[table+" "+row.Find("td bdi").First().Text()] = strings.Join(strings.Fields(row.Find("[data-testid=backend-state]").Text()), " ")
		})
	}
	return out
}

// blackhole accepts TCP connections and never answers, like a host that
// is up but whose service hangs; Close shuts it and every connection, so
// that what was waiting on it fails.
type blackhole struct {
	ln    net.Listener
	mu    sync.Mutex
	conns []net.Conn
	done  chan struct{}
}

func newBlackhole(t *testing.T) *blackhole {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	b := &blackhole{ln: ln, done: make(chan struct{})}
	go func() {
		defer close(b.done)
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			b.mu.Lock()
			b.conns = append(b.conns, c)
			b.mu.Unlock()
		}
	}()
	t.Cleanup(b.Close)
	return b
}

func (b *blackhole) Addr() string { return b.ln.Addr().String() }

func (b *blackhole) Close() {
	b.ln.Close()
	<-b.done
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, c := range b.conns {
		c.Close()
	}
	b.conns = nil
}

// TestUnreachableBackendsListed: Kafka clusters and Flink endpoints that
// no poll reaches are on the overview from the start, as the API and the
// page show it: not yet polled while the first poll runs, never reached
// with its error once it has failed; never missing, never fresh. Two hang
// (a listener that never answers) until the test closes them; two point
// at a closed local port.
func TestUnreachableBackendsListed(t *testing.T) {
	kafkaHang, flinkHang := newBlackhole(t), newBlackhole(t)
	dir := t.TempDir()
	file := writeConfig(t, dir, fmt.Sprintf(`kafka:
  clusters:
    - {name: hanging, brokers: ['%s'], requestTimeout: 30s, pollInterval: 1h}
    - {name: refused, brokers: ['%s'], requestTimeout: 30s, pollInterval: 1h}
flink:
  endpoints:
    - {name: hanging-jm, url: 'http://%s', requestTimeout: 30s, pollInterval: 1h}
    - {name: refused-jm, url: 'http://%s', requestTimeout: 30s, pollInterval: 1h}
`, kafkaHang.Addr(), closedPort(t), flinkHang.Addr(), closedPort(t)))
	base, stop := runDashboard(t, "--listen", "127.0.0.1:0", "--config.file", file)

	states := func() map[string]backendRow {
		clusters, endpoints := overviewBackends(t, base)
		m := map[string]backendRow{}
		for _, c := range clusters {
			m["clusters "+c.Name] = c
		}
		for _, e := range endpoints {
			m["endpoints "+e.Name] = e
		}
		return m
	}
	before := func(s string) bool { return s == "not yet polled" || s == "never reached" }
	// The hanging backends cannot have finished a poll: not yet polled.
	// The refused ones may have failed already.
	got, page := states(), overviewPageStates(t, base)
	for k, want := range map[string]func(string) bool{
		"clusters hanging":     func(s string) bool { return s == "not yet polled" },
		"endpoints hanging-jm": func(s string) bool { return s == "not yet polled" },
		"clusters refused":     before,
		"endpoints refused-jm": before,
	} {
		if r, ok := got[k]; !ok || !want(r.State) {
			t.Errorf("API overview while the first polls run: %s = %+v (listed %v)", k, r, ok)
		}
		if s, ok := page[k]; !ok || !want(strings.TrimSuffix(strings.SplitN(s, " · ", 2)[0], " ")) {
			t.Errorf("overview page while the first polls run: %s = %q (listed %v)", k, s, ok)
		}
	}

	// Now the hanging ones fail too; wait for every first poll to end by
	// asking again, a bounded number of times.
	kafkaHang.Close()
	flinkHang.Close()
	for range 1000 {
		got = states()
		n := 0
		for _, r := range got {
			if r.State == "never reached" {
				n++
			}
		}
		if n == 4 {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	page = overviewPageStates(t, base)
	for _, k := range []string{"clusters hanging", "clusters refused", "endpoints hanging-jm", "endpoints refused-jm"} {
		r := got[k]
		if r.State != "never reached" || r.Err == "" {
			t.Errorf("API overview after the first polls: %s = %+v, want never reached with the error", k, r)
		}
		if s := page[k]; !strings.HasPrefix(s, "never reached") || r.Err == "" || !strings.Contains(s, strings.Join(strings.Fields(r.Err), " ")) {
			t.Errorf("overview page after the first polls: %s = %q, want never reached with the error %q", k, s, r.Err)
		}
	}
	if err := stop(); err != nil {
		t.Errorf("run() = %v after cancel, want nil", err)
	}
}
