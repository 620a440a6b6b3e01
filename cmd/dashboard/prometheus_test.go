//go:build prometheus

// The prometheus tier: a real Prometheus (Debian's prometheus package)
// scrapes the dashboard binary running its sandbox, evaluates the shipped
// alert rules (examples/prometheus/alerts.yml), and the link of the alert
// that fires on the sandbox's lagging subtask is followed in headless
// Chromium to the page with that subtask's row highlighted. Run it with
// `make prometheus` (which installs Prometheus and Chromium when missing) or
// `go test -tags prometheus -run Prometheus ./cmd/dashboard/`.

package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/chromedp"
	"gopkg.in/yaml.v3"

	"github.com/skewscope/skewscope/internal/browsertest"
)

const (
	// shippedRules are the alert rules under test.
	shippedRules = "../../examples/prometheus/alerts.yml"
	// linkPlaceholder is the base of every link in shippedRules, standing
	// for skewscope's external URL.
	linkPlaceholder = "https://tools.example.com/skewscope"
	// routePrefix serves the dashboard under a path, as behind a proxy,
	// so that the links' path prefix is exercised too.
	routePrefix = "/skewscope"
	// testFor replaces every rule's for: duration. The shipped ones (5 to
	// 15 minutes) would outlast the tier; the expressions and thresholds
	// are the shipped ones.
	testFor = "2s"
	// pollLimit bounds the polls of Prometheus's alerts, one a second.
	// The sandbox's hot subtask is 30 s behind (the skew alert's floor)
	// about a minute after the start; at the slowest phase of its traffic
	// (145 records/s against the 120 it reads), about three.
	pollLimit = 420
	// skewAlert is the alert that fires on the sandbox's hot subtask.
	skewAlert = "FlinkSourceSubtaskLagSkew"
	// heldAlert is the alert that fires once orders-7 falls silent (a
	// minute into the sandbox) and holds orders-enrichment's watermark.
	heldAlert = "FlinkWatermarkHeldBack"
)

// backendAlerts must stay quiet on the healthy sandbox.
var backendAlerts = []string{"SkewscopeBackendDown", "SkewscopeBackendPollsStalled"}

// prometheusBinary returns Prometheus's server: $SKEWSCOPE_PROMETHEUS or
// prometheus on PATH. Missing, it fails the test: scripts/ensure-promtool.sh
// (run by make prometheus) installs Debian's prometheus package.
func prometheusBinary(t *testing.T) string {
	t.Helper()
	if p := os.Getenv("SKEWSCOPE_PROMETHEUS"); p != "" {
		return p
	}
	p, err := exec.LookPath("prometheus")
	if err != nil {
		t.Fatal("prometheus not found: run scripts/ensure-promtool.sh (apt-get install prometheus) or set SKEWSCOPE_PROMETHEUS")
	}
	return p
}

// testRules writes the shipped rules with each for: set to testFor and the
// links' placeholder replaced by base, and returns the alert names.
func testRules(t *testing.T, dir, base string) []string {
	t.Helper()
	b, err := os.ReadFile(shippedRules)
	if err != nil {
		t.Fatal(err)
	}
	var rf struct {
		Groups []struct {
			Name  string           `yaml:"name"`
			Rules []map[string]any `yaml:"rules"`
		} `yaml:"groups"`
	}
	if err := yaml.Unmarshal(b, &rf); err != nil {
		t.Fatalf("%s: %v", shippedRules, err)
	}
	var names []string
	for _, g := range rf.Groups {
		for _, r := range g.Rules {
			names = append(names, r["alert"].(string))
			if _, ok := r["for"]; ok {
				r["for"] = testFor
			}
			ann, _ := r["annotations"].(map[string]any)
			for k, v := range ann {
				if s, ok := v.(string); ok {
					ann[k] = strings.ReplaceAll(s, linkPlaceholder, base)
				}
			}
		}
	}
	out, err := yaml.Marshal(rf)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "alerts.yml"), out, 0o644); err != nil {
		t.Fatal(err)
	}
	return names
}

// prometheusProc is a running Prometheus server.
type prometheusProc struct {
	URL    string
	cmd    *exec.Cmd
	done   chan error
	exited bool
	output *syncBuffer
}

// freePort returns a loopback port that nothing listened on a moment ago.
func freePort(t *testing.T) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

// startPrometheus starts Prometheus with the configuration in dir, storage
// in dir/data and its web server on a free port, and waits for /-/ready.
// A port taken between freePort and the start is tried again elsewhere.
func startPrometheus(t *testing.T, bin, dir string) *prometheusProc {
	t.Helper()
	for range 3 {
		if p, portTaken := tryPrometheus(t, bin, dir); !portTaken {
			return p
		}
	}
	t.Fatalf("prometheus found its port taken three times")
	return nil
}

// tryPrometheus is one start of startPrometheus. It reports portTaken when
// Prometheus exited because its port was in use, and fails the test on any
// other failure.
func tryPrometheus(t *testing.T, bin, dir string) (p *prometheusProc, portTaken bool) {
	t.Helper()
	addr := "127.0.0.1:" + strconv.Itoa(freePort(t))
	p = &prometheusProc{URL: "http://" + addr, done: make(chan error, 1), output: &syncBuffer{}}
	p.cmd = exec.Command(bin,
		"--config.file="+filepath.Join(dir, "prometheus.yml"),
		"--storage.tsdb.path="+filepath.Join(dir, "data"),
		"--web.listen-address="+addr,
		"--log.level=warn")
	p.cmd.Stdout, p.cmd.Stderr = p.output, p.output
	if err := p.cmd.Start(); err != nil {
		t.Fatalf("start %s: %v", bin, err)
	}
	go func() { p.done <- p.cmd.Wait() }()
	t.Cleanup(func() {
		if !p.exited {
			p.cmd.Process.Kill()
			<-p.done
		}
	})
	for range 60 {
		select {
		case err := <-p.done:
			p.exited = true
			if strings.Contains(p.output.String(), "address already in use") {
				return p, true
			}
			t.Fatalf("prometheus exited before it was ready: %v\n%s", err, p.output.String())
		case <-time.After(500 * time.Millisecond):
		}
		if resp, err := http.Get(p.URL + "/-/ready"); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return p, false
			}
		}
	}
	t.Fatalf("prometheus at %s was not ready after 60 polls; output:\n%s", p.URL, p.output.String())
	return nil, false
}

// stop sends SIGTERM and waits for Prometheus to exit.
func (p *prometheusProc) stop(t *testing.T) {
	t.Helper()
	if p.exited {
		return
	}
	p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case err := <-p.done:
		p.exited = true
		if err != nil {
			t.Errorf("prometheus exit after SIGTERM = %v, want code 0; output:\n%s", err, p.output.String())
		}
	case <-time.After(30 * time.Second):
		t.Errorf("prometheus did not exit within 30s of SIGTERM")
	}
}

// promAPI GETs path (with query q) from Prometheus's HTTP API and decodes
// its data field into v.
func promAPI(t *testing.T, p *prometheusProc, path string, q url.Values, v any) {
	t.Helper()
	u := p.URL + path
	if q != nil {
		u += "?" + q.Encode()
	}
	resp, err := http.Get(u)
	if err != nil {
		t.Fatalf("GET %s: %v", u, err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	var env struct {
		Status string          `json:"status"`
		Error  string          `json:"error"`
		Data   json.RawMessage `json:"data"`
	}
	if err := json.Unmarshal(body, &env); err != nil || resp.StatusCode != http.StatusOK || env.Status != "success" {
		t.Fatalf("GET %s = %d %.500s (%v)", u, resp.StatusCode, body, err)
	}
	if err := json.Unmarshal(env.Data, v); err != nil {
		t.Fatalf("GET %s: data %.500s: %v", u, env.Data, err)
	}
}

// promAlert is one alert of /api/v1/alerts.
type promAlert struct {
	Labels      map[string]string `json:"labels"`
	Annotations map[string]string `json:"annotations"`
	State       string            `json:"state"`
	Value       string            `json:"value"`
}

func (a promAlert) String() string {
	return fmt.Sprintf("%s %s %v value %s", a.Labels["alertname"], a.State, a.Labels, a.Value)
}

// promQuery returns the label sets and values of an instant query.
func promQuery(t *testing.T, p *prometheusProc, expr string) []map[string]string {
	t.Helper()
	var res struct {
		Result []struct {
			Metric map[string]string `json:"metric"`
			Value  [2]any            `json:"value"`
		} `json:"result"`
	}
	promAPI(t, p, "/api/v1/query", url.Values{"query": {expr}}, &res)
	out := make([]map[string]string, len(res.Result))
	for i, r := range res.Result {
		out[i] = r.Metric
		out[i]["__value__"], _ = r.Value[1].(string)
	}
	return out
}

// emulateColorScheme sets prefers-color-scheme.
func emulateColorScheme(scheme string) chromedp.Action[chromedp.Void] {
	return chromedp.Func(func(ctx context.Context, t *chromedp.Target) error {
		_, err := cdp.Call(ctx, t, emulation.SetEmulatedMedia, emulation.SetEmulatedMediaParams{
			Features: []*emulation.MediaFeature{{Name: "prefers-color-scheme", Value: scheme}}})
		return err
	})
}

func TestPrometheusAlertLinksToHighlightedRow(t *testing.T) {
	promBin := prometheusBinary(t)
	if out, err := exec.Command(promBin, "--version").CombinedOutput(); err == nil {
		t.Logf("%s", bytes.SplitN(out, []byte("\n"), 2)[0])
	}
	bin := buildDashboard(t)
	d := startDashboard(t, bin, "--listen", "127.0.0.1:0", "--web.route-prefix", routePrefix)
	u, err := url.Parse(d.Base)
	if err != nil || u.Path != routePrefix {
		t.Fatalf("dashboard base %q, want one ending in %s", d.Base, routePrefix)
	}
	jobs := sandboxJobs(t, d.Base)
	orders, ok := jobs["orders-enrichment"]
	if !ok {
		t.Fatalf("the sandbox has no orders-enrichment job: %+v", jobs)
	}
	vertexID, _, _ := sourceVertex(t, d.Base, orders.ID)

	// Both backends polled before the first scrape: until its first poll a
	// backend is down, rightly.
	var ov struct {
		Clusters, Endpoints []struct {
			Name      string `json:"name"`
			Freshness struct {
				State string `json:"state"`
			} `json:"freshness"`
		}
	}
	if !waitUntil(t, 30*time.Second, 200*time.Millisecond, func() bool {
		status, _ := getJSON(t, d.Base, "/api/v1/overview", &ov)
		ok := status == http.StatusOK && len(ov.Clusters) == 1 && len(ov.Endpoints) == 1
		for _, b := range append(ov.Clusters, ov.Endpoints...) {
			ok = ok && b.Freshness.State == "ok"
		}
		return ok
	}) {
		t.Fatalf("the sandbox's backends were not both polled within 30s: %+v", ov)
	}

	dir := t.TempDir()
	alertNames := testRules(t, dir, d.Base)
	promConfig := fmt.Sprintf(`global:
  scrape_interval: 1s
  scrape_timeout: 1s
  evaluation_interval: 1s
rule_files: [alerts.yml]
scrape_configs:
  - job_name: skewscope
    metrics_path: %s/metrics
    static_configs:
      - targets: [%q]
`, routePrefix, u.Host)
	if err := os.WriteFile(filepath.Join(dir, "prometheus.yml"), []byte(promConfig), 0o644); err != nil {
		t.Fatal(err)
	}
	prom := startPrometheus(t, promBin, dir)
	t.Logf("prometheus at %s scrapes %s%s/metrics", prom.URL, u.Host, routePrefix)

	// Poll the alerts until the skew alert fires on the orders source.
	var fired *promAlert
	var last []promAlert
	backendSeen := map[string]promAlert{}
	for i := 0; i < pollLimit && fired == nil; i++ {
		time.Sleep(time.Second)
		var res struct {
			Alerts []promAlert `json:"alerts"`
		}
		promAPI(t, prom, "/api/v1/alerts", nil, &res)
		last = res.Alerts
		for _, a := range res.Alerts {
			if slices.Contains(backendAlerts, a.Labels["alertname"]) {
				backendSeen[a.Labels["alertname"]+" "+a.State] = a
			}
			if a.Labels["alertname"] == skewAlert && a.State == "firing" && a.Labels["job_name"] == orders.Name {
				fired = &a
			}
		}
	}
	if fired == nil {
		t.Fatalf("%s did not fire for %s within %d polls of /api/v1/alerts; the last answer: %v\ndashboard stderr:\n%s",
			skewAlert, orders.Name, pollLimit, last, d.stderr.String())
	}
	t.Logf("fired: %v\n\tsummary: %s\n\tskewscope: %s", fired, fired.Annotations["summary"], fired.Annotations["skewscope"])

	// The alert is on the subtask furthest behind, as the JSON API says.
	var v struct {
		Subtasks []struct {
			Subtask    int     `json:"subtask"`
			LagSeconds float64 `json:"lagSeconds"`
		} `json:"subtasks"`
	}
	if status, body := getJSON(t, d.Base, "/api/v1/jobs/"+orders.ID+"/vertices/"+vertexID, &v); status != http.StatusOK {
		t.Fatalf("GET the source vertex's JSON = %d %.300s", status, body)
	}
	hot, hotLag := -1, -1.0
	for _, s := range v.Subtasks {
		if s.LagSeconds > hotLag {
			hot, hotLag = s.Subtask, s.LagSeconds
		}
	}
	sub := strconv.Itoa(hot)
	for k, want := range map[string]string{"endpoint": "sandbox", "job_name": orders.Name, "vertex_name": "Source: Kafka Source", "subtask": sub, "severity": "warning"} {
		if fired.Labels[k] != want {
			t.Errorf("the fired alert's label %s = %q, want %q (the subtask furthest behind, %.0f s, per the JSON API: %+v)", k, fired.Labels[k], want, hotLag, v.Subtasks)
		}
	}
	if s := fired.Annotations["summary"]; !strings.Contains(s, orders.Name) || !strings.Contains(s, "subtask "+sub) {
		t.Errorf("summary %q does not name job %s and subtask %s", s, orders.Name, sub)
	}
	link := fired.Annotations["skewscope"]
	wantLink := d.Base + "/jobs/by-name/orders-enrichment/vertices/Source%3A+Kafka+Source?endpoint=sandbox&highlight=subtask:" + sub
	if link != wantLink {
		t.Errorf("the alert's link = %q, want %q", link, wantLink)
	}

	// Every shipped rule loaded and evaluates without error against real
	// series (a many-to-many match, say, fails only at evaluation).
	var rules struct {
		Groups []struct {
			Rules []struct {
				Name           string    `json:"name"`
				State          string    `json:"state"`
				Health         string    `json:"health"`
				LastError      string    `json:"lastError"`
				LastEvaluation time.Time `json:"lastEvaluation"`
			} `json:"rules"`
		} `json:"groups"`
	}
	promAPI(t, prom, "/api/v1/rules", nil, &rules)
	var loaded []string
	for _, g := range rules.Groups {
		for _, r := range g.Rules {
			loaded = append(loaded, r.Name)
			if r.Health != "ok" || r.LastError != "" || r.LastEvaluation.IsZero() {
				t.Errorf("rule %s: health %q, last error %q, last evaluation %v; want ok and evaluated", r.Name, r.Health, r.LastError, r.LastEvaluation)
			}
			if slices.Contains(backendAlerts, r.Name) && r.State != "inactive" {
				t.Errorf("rule %s is %s on the healthy sandbox, want inactive", r.Name, r.State)
			}
		}
	}
	slices.Sort(loaded)
	slices.Sort(alertNames)
	if !slices.Equal(loaded, alertNames) {
		t.Errorf("prometheus loaded rules %q, want the shipped %q", loaded, alertNames)
	}

	// The backend alerts stayed quiet all along (Prometheus's ALERTS series
	// records each evaluation's pending and firing alerts), on inputs that
	// say both backends are up.
	if len(backendSeen) > 0 {
		t.Errorf("backend alerts on the healthy sandbox: %v", backendSeen)
	}
	if got := promQuery(t, prom, `max_over_time(ALERTS{alertname=~"SkewscopeBackend.*"}[1h])`); len(got) != 0 {
		t.Errorf("ALERTS has backend alerts over the run: %v", got)
	}
	if got := promQuery(t, prom, `skewscope_backend_up == 1`); len(got) != 2 {
		t.Errorf("skewscope_backend_up == 1 has %d series, want 2 (the sandbox's Kafka and Flink): %v", len(got), got)
	}
	var targets struct {
		ActiveTargets []struct {
			Health    string `json:"health"`
			LastError string `json:"lastError"`
			ScrapeURL string `json:"scrapeUrl"`
		} `json:"activeTargets"`
	}
	promAPI(t, prom, "/api/v1/targets", nil, &targets)
	if len(targets.ActiveTargets) != 1 || targets.ActiveTargets[0].Health != "up" {
		t.Errorf("prometheus targets %+v, want the dashboard, up", targets.ActiveTargets)
	}

	// Follow the link as the on-call engineer would.
	b := browsertest.New(t, browsertest.WithTimeout(120*time.Second))
	if status := b.Navigate(t, link); status != http.StatusOK {
		t.Fatalf("the alert's link %s opens with status %d, want 200", link, status)
	}
	wantPath := routePrefix + "/jobs/" + orders.ID + "/vertices/" + vertexID
	if got := browsertest.Eval[string](t, b, `location.pathname`); got != wantPath {
		t.Errorf("the link lands on %s, want the current run's source page %s", got, wantPath)
	}
	if got := b.Text(t, `[data-testid=context]`); !strings.Contains(got, orders.Name) || !strings.Contains(got, "Source: Kafka Source") {
		t.Errorf("the page's context line %q does not name job %s and its source", got, orders.Name)
	}
	hlJS := `Array.from(document.querySelectorAll("[data-testid=subtask-row].hl")).map(r => r.dataset.subtask)`
	if got := browsertest.Eval[[]string](t, b, hlJS); !slices.Equal(got, []string{sub}) {
		t.Errorf("highlighted rows (tr.hl) = %q, want only subtask %s", got, sub)
	}
	// The first screen answers: the page opens at its brief, which names
	// the highlighted subtask with its lag and the action, above the grid
	// (by element positions, in the viewport at scroll 0).
	if got := browsertest.Eval[string](t, b, `location.hash`); got != "" {
		t.Errorf("the link lands on fragment %q, want none: the brief is the first screen", got)
	}
	firstJS := `JSON.stringify([...document.querySelectorAll('[data-testid=context] a strong, [data-testid=brief-subtask], [data-testid=brief-lag], [data-testid=brief-lagtime], [data-testid=brief-action]')]
		.map(e => { const r = e.getBoundingClientRect(); return {id: e.dataset.testid || "job", top: r.top, text: e.textContent.trim(), scrollY}; }))`
	var first []struct {
		ID      string  `json:"id"`
		Top     float64 `json:"top"`
		Text    string  `json:"text"`
		ScrollY float64 `json:"scrollY"`
	}
	if err := json.Unmarshal([]byte(browsertest.Eval[string](t, b, firstJS)), &first); err != nil {
		t.Fatal(err)
	}
	if len(first) != 5 {
		t.Errorf("first screen parts %+v, want the job, the subtask, its lag, its lag time and the action", first)
	}
	height := browsertest.Eval[float64](t, b, `innerHeight`)
	for _, e := range first {
		if e.ScrollY != 0 || e.Top < 0 || e.Top > height {
			t.Errorf("%s (%q) is at y %.0f (scrolled %.0f), want it in the first %.0f px", e.ID, e.Text, e.Top, e.ScrollY, height)
		}
		if e.ID == "brief-subtask" && e.Text != "Subtask "+sub {
			t.Errorf("the brief names %q, want subtask %s", e.Text, sub)
		}
	}
	// Its cause is on the same screen: the why panel's line about the
	// subtask is repeated under its row.
	whyJS := `(() => { const w = document.querySelector("[data-testid=subtask-row].hl + [data-testid=row-why]");
		const named = Array.from(document.querySelectorAll("[data-testid=why-line].hot")).some(l => l.textContent.includes("Subtask ` + sub + ` "));
		return JSON.stringify({row: w ? w.textContent : "", named}); })()`
	var why struct {
		Row   string `json:"row"`
		Named bool   `json:"named"`
	}
	if err := json.Unmarshal([]byte(browsertest.Eval[string](t, b, whyJS)), &why); err != nil {
		t.Fatal(err)
	}
	if why.Named && !strings.Contains(why.Row, "Subtask "+sub+" ") {
		t.Errorf("the why panel names subtask %s but its row repeats %q", sub, why.Row)
	}
	t.Logf("under the highlighted row: %s", strings.Join(strings.Fields(why.Row), " "))
	b.Screenshot(t, "alert-link-light")
	b.Do(t, emulateColorScheme("dark"))
	b.Screenshot(t, "alert-link-dark")
	b.Do(t, emulateColorScheme("light"), chromedp.EmulateViewport(390, 844))
	if got := browsertest.Eval[[]string](t, b, hlJS); !slices.Equal(got, []string{sub}) {
		t.Errorf("at 390 px, highlighted rows = %q, want only subtask %s", got, sub)
	}
	b.Screenshot(t, "alert-link-390px")
	b.NoConsoleErrors(t)
	b.NoDialogs(t)

	// The watermark alert: orders-7 goes silent a minute into the sandbox
	// and holds orders-enrichment's watermark, which has no idle timeout.
	var held *promAlert
	for i := 0; i < pollLimit && held == nil; i++ {
		var res struct {
			Alerts []promAlert `json:"alerts"`
		}
		promAPI(t, prom, "/api/v1/alerts", nil, &res)
		last = res.Alerts
		for _, a := range res.Alerts {
			if a.Labels["alertname"] == heldAlert && a.State == "firing" && a.Labels["job_name"] == orders.Name {
				held = &a
			}
		}
		if held == nil {
			time.Sleep(time.Second)
		}
	}
	if held == nil {
		t.Fatalf("%s did not fire for %s within %d polls of /api/v1/alerts; the last answer: %v", heldAlert, orders.Name, pollLimit, last)
	}
	t.Logf("fired: %v\n\tsummary: %s\n\tskewscope: %s", held, held.Annotations["summary"], held.Annotations["skewscope"])
	for k, want := range map[string]string{"endpoint": "sandbox", "job_name": orders.Name, "vertex_name": "Source: Kafka Source", "topic": "orders", "partition": "7", "cause": "idle"} {
		if held.Labels[k] != want {
			t.Errorf("%s's label %s = %q, want %q", heldAlert, k, held.Labels[k], want)
		}
	}
	heldLink := d.Base + "/jobs/by-name/orders-enrichment/vertices/Source%3A+Kafka+Source?endpoint=sandbox&highlight=partition:orders:7"
	if got := held.Annotations["skewscope"]; got != heldLink {
		t.Errorf("%s's link = %q, want %q", heldAlert, got, heldLink)
	}
	// A browser of its own: the first one's time is spent by now.
	b = browsertest.New(t, browsertest.WithTimeout(120*time.Second))
	if status := b.Navigate(t, heldLink); status != http.StatusOK {
		t.Fatalf("%s's link opens with status %d, want 200", heldAlert, status)
	}
	cellJS := `Array.from(document.querySelectorAll("[data-testid=pcell].hl")).map(c => c.dataset.topic + "-" + c.dataset.partition)`
	if got := browsertest.Eval[[]string](t, b, cellJS); !slices.Equal(got, []string{"orders-7"}) {
		t.Errorf("highlighted cells = %q, want orders-7", got)
	}
	if got := b.Text(t, `[data-testid=brief]`); !strings.Contains(got, "orders-7") || !strings.Contains(got, "no idle timeout") {
		t.Errorf("the held-back alert's page opens at %q, want it to name orders-7 and the missing idle timeout", got)
	}
	b.Screenshot(t, "watermark-alert-link-light")
	b.NoConsoleErrors(t)
	b.NoDialogs(t)

	prom.stop(t)
	if err := d.stop(t, 15*time.Second); err != nil {
		t.Errorf("dashboard exit after SIGTERM = %v, want code 0", err)
	}
}
