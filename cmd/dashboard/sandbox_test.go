package main

// End-to-end tests of the dashboard binary: built with go build, started as
// a process with no configuration (so it runs the built-in sandbox), asked
// questions through its JSON API and stopped with SIGTERM.

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"
)

// dashboardProc is a running dashboard binary.
type dashboardProc struct {
	Base   string // http://127.0.0.1:PORT and the route prefix, no trailing slash
	cmd    *exec.Cmd
	done   chan error // receives cmd.Wait's result once
	exited bool
	stdout *syncBuffer
	stderr *syncBuffer
}

// buildDashboard builds this command into a temporary directory and returns
// the executable's path.
func buildDashboard(t testing.TB) string {
	t.Helper()
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Fatalf("the go command is not in PATH: %v", err)
	}
	bin := filepath.Join(t.TempDir(), "dashboard")
	cmd := exec.Command(goTool, "build", "-o", bin, ".")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build -o %s . = %v\n%s", bin, err, out)
	}
	return bin
}

// dashboardAddrRE finds the address line that run prints on stdout: the
// base URL, with the route prefix if there is one.
var dashboardAddrRE = regexp.MustCompile(`skewscope: (http://[0-9.:]+(?:/\S*[^/\s])?)/\n`)

// startDashboard starts bin with args and an environment without any
// SKEWSCOPE_* variable, waits for the address line on stdout and then for
// /readyz to answer 200. The process is killed when the test ends, if it
// still runs.
func startDashboard(t testing.TB, bin string, args ...string) *dashboardProc {
	t.Helper()
	p := &dashboardProc{done: make(chan error, 1), stdout: &syncBuffer{}, stderr: &syncBuffer{}}
	p.cmd = exec.Command(bin, args...)
	p.cmd.Stdout, p.cmd.Stderr = p.stdout, p.stderr
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, envPrefix) {
			p.cmd.Env = append(p.cmd.Env, kv)
		}
	}
	if err := p.cmd.Start(); err != nil {
		t.Fatalf("start %s %q: %v", bin, args, err)
	}
	go func() { p.done <- p.cmd.Wait() }()
	t.Cleanup(func() {
		if p.exited {
			return
		}
		p.cmd.Process.Kill()
		<-p.done
		if t.Failed() {
			t.Logf("dashboard stderr:\n%s", p.stderr.String())
		}
	})

	deadline := time.Now().Add(15 * time.Second)
	for p.Base == "" {
		if m := dashboardAddrRE.FindStringSubmatch(p.stdout.String()); m != nil {
			p.Base = m[1]
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("dashboard %q printed no address within 15s; stdout:\n%s\nstderr:\n%s", args, p.stdout.String(), p.stderr.String())
		}
		select {
		case err := <-p.done:
			p.exited = true
			t.Fatalf("dashboard %q exited before printing its address: %v\nstderr:\n%s", args, err, p.stderr.String())
		case <-time.After(20 * time.Millisecond):
		}
	}

	var last string
	ok := waitUntil(t, 20*time.Second, 100*time.Millisecond, func() bool {
		resp, err := http.Get(p.Base + "/readyz")
		if err != nil {
			last = err.Error()
			return false
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		last = fmt.Sprintf("%d %s", resp.StatusCode, body)
		return resp.StatusCode == http.StatusOK
	})
	if !ok {
		t.Fatalf("GET %s/readyz did not answer 200 within 20s; last answer: %s", p.Base, last)
	}
	return p
}

// stop sends SIGTERM and waits up to within for the process to exit,
// returning its exit error (nil for code 0).
func (p *dashboardProc) stop(t testing.TB, within time.Duration) error {
	t.Helper()
	if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatalf("SIGTERM: %v", err)
	}
	select {
	case err := <-p.done:
		p.exited = true
		return err
	case <-time.After(within):
		t.Fatalf("dashboard did not exit within %v of SIGTERM; stderr:\n%s", within, p.stderr.String())
		return nil
	}
}

// waitUntil calls cond every interval until it returns true or within passes. It
// reports whether cond returned true.
func waitUntil(t testing.TB, within, interval time.Duration, cond func() bool) bool {
	t.Helper()
	deadline := time.Now().Add(within)
	for {
		if cond() {
			return true
		}
		if time.Now().Add(interval).After(deadline) {
			return false
		}
		time.Sleep(interval)
	}
}

// getJSON GETs base+path and decodes the body into v when the status is
// 200. It returns the status and the raw body.
func getJSON(t testing.TB, base, path string, v any) (int, string) {
	t.Helper()
	resp, err := http.Get(base + path)
	if err != nil {
		t.Fatalf("GET %s: %v", path, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("GET %s: reading the body: %v", path, err)
	}
	if resp.StatusCode == http.StatusOK && v != nil {
		if err := json.Unmarshal(body, v); err != nil {
			t.Fatalf("GET %s: body is not the JSON expected: %v\n%.500s", path, err, body)
		}
	}
	return resp.StatusCode, string(body)
}

// The parts of the JSON API that these tests read.
type (
	apiJobs struct {
		Jobs []apiJobSummary `json:"jobs"`
	}
	apiJobSummary struct {
		ID    string `json:"id"`
		Name  string `json:"name"`
		State string `json:"state"`
	}
	apiJob struct {
		ID       string `json:"id"`
		Name     string `json:"name"`
		State    string `json:"state"`
		Vertices []struct {
			ID          string `json:"id"`
			Parallelism int    `json:"parallelism"`
			Source      bool   `json:"source"`
			Kafka       bool   `json:"kafka"`
			Partitions  int    `json:"partitions"`
		} `json:"vertices"`
	}
	apiVertex struct {
		JobID       string        `json:"jobId"`
		JobState    string        `json:"jobState"`
		ID          string        `json:"id"`
		Parallelism int           `json:"parallelism"`
		Prediction  apiPrediction `json:"prediction"`
		Subtasks    []apiSubtask  `json:"subtasks"`
	}
	apiPrediction struct {
		Mode    string `json:"mode"`
		History []int  `json:"history"`
		Matched int    `json:"matched"`
		Total   int    `json:"total"`
		Drift   int    `json:"drift"`
		// Uncertain counts owners the model cannot determine.
		Uncertain int `json:"uncertain"`
	}
	apiSubtask struct {
		Subtask    int     `json:"subtask"`
		Lag        int64   `json:"lag"`
		Busy       float64 `json:"busy"`
		Partitions []struct {
			Topic     string `json:"topic"`
			Partition int32  `json:"partition"`
		} `json:"partitions"`
	}
	apiTopicGroup struct {
		Name string `json:"name"`
	}
	apiTopic struct {
		Name       string          `json:"name"`
		Groups     []apiTopicGroup `json:"groups"`
		Partitions []struct {
			Partition int32 `json:"partition"`
			EndOffset int64 `json:"endOffset"`
			Groups    []struct {
				Committed *int64 `json:"committed"`
			} `json:"groups"`
		} `json:"partitions"`
	}
)

// sandboxJobs waits for the sandbox's two jobs and returns them by name.
func sandboxJobs(t testing.TB, base string) map[string]apiJobSummary {
	t.Helper()
	var jobs apiJobs
	var last string
	ok := waitUntil(t, 20*time.Second, 200*time.Millisecond, func() bool {
		jobs = apiJobs{}
		status, body := getJSON(t, base, "/api/v1/jobs", &jobs)
		last = fmt.Sprintf("%d %.500s", status, body)
		return status == http.StatusOK && len(jobs.Jobs) >= 2
	})
	if !ok {
		t.Fatalf("GET /api/v1/jobs did not list the sandbox jobs within 20s; last answer: %s", last)
	}
	byName := map[string]apiJobSummary{}
	for _, j := range jobs.Jobs {
		byName[j.Name] = j
	}
	return byName
}

// sourceVertex returns the Kafka source vertex of a job.
func sourceVertex(t testing.TB, base, jobID string) (id string, parallelism, partitions int) {
	t.Helper()
	var job apiJob
	if status, body := getJSON(t, base, "/api/v1/jobs/"+jobID, &job); status != http.StatusOK {
		t.Fatalf("GET /api/v1/jobs/%s = %d %.300s, want 200", jobID, status, body)
	}
	for _, v := range job.Vertices {
		if v.Source && v.Kafka {
			return v.ID, v.Parallelism, v.Partitions
		}
	}
	t.Fatalf("job %s (%s) has no Kafka source vertex: %+v", jobID, job.Name, job.Vertices)
	return "", 0, 0
}

// hotSubtask returns the busiest subtask (highest busy ratio, the lowest
// index on a tie) and the largest subtask lag.
func hotSubtask(v apiVertex) (hot int, hotLag, maxLag int64) {
	hot = -1
	best := -1.0
	for _, s := range v.Subtasks {
		if s.Busy > best {
			hot, best, hotLag = s.Subtask, s.Busy, s.Lag
		}
		maxLag = max(maxLag, s.Lag)
	}
	return hot, hotLag, maxLag
}

// lagsKnown reports whether every subtask of v has a lag (not -1, unknown)
// and some subtask a busy ratio.
func lagsKnown(v apiVertex) bool {
	busy := false
	for _, s := range v.Subtasks {
		if s.Lag < 0 {
			return false
		}
		busy = busy || s.Busy > 0
	}
	return len(v.Subtasks) > 0 && busy
}

func TestSandboxEndToEnd(t *testing.T) {
	bin := buildDashboard(t)
	d := startDashboard(t, bin, "--listen", "127.0.0.1:0")
	base := d.Base

	jobs := sandboxJobs(t, base)
	for _, name := range []string{"orders-enrichment", "clickstream-sessions"} {
		j, ok := jobs[name]
		switch {
		case !ok:
			t.Errorf("GET /api/v1/jobs lists no job %q; jobs: %+v", name, jobs)
		case j.State != "RUNNING":
			t.Errorf("GET /api/v1/jobs: job %s state = %q, want RUNNING", name, j.State)
		}
	}
	orders, ok := jobs["orders-enrichment"]
	if !ok {
		t.FailNow()
	}
	vertexID, parallelism, partitions := sourceVertex(t, base, orders.ID)
	if parallelism != 4 {
		t.Errorf("orders-enrichment source parallelism = %d, want 4", parallelism)
	}
	vertexPath := "/api/v1/jobs/" + orders.ID + "/vertices/" + vertexID

	// The fresh-start prediction, and every partition owned.
	var v apiVertex
	owned := 0
	ok = waitUntil(t, 10*time.Second, 200*time.Millisecond, func() bool {
		v = apiVertex{}
		if status, body := getJSON(t, base, vertexPath, &v); status != http.StatusOK {
			t.Fatalf("GET %s = %d %.300s, want 200", vertexPath, status, body)
		}
		_, _, partitions = sourceVertex(t, base, orders.ID)
		owned = 0
		for _, s := range v.Subtasks {
			owned += len(s.Partitions)
		}
		return len(v.Subtasks) == 4 && owned > 0 && owned == partitions
	})
	if !ok {
		t.Errorf("GET %s: %d subtasks owning %d partitions, want 4 subtasks owning the vertex's %d", vertexPath, len(v.Subtasks), owned, partitions)
	}
	if p := v.Prediction; p.Mode != "fresh" || p.Drift != 0 || p.Matched != owned || p.Total != owned {
		t.Errorf("GET %s: prediction = %+v, want mode fresh, drift 0, matched = total = %d", vertexPath, p, owned)
	}

	// The hot subtask falls behind: its lag is the largest and grows.
	type sample struct {
		hot            int
		hotLag, maxLag int64
	}
	var samples []sample
	grew := waitUntil(t, 40*time.Second, 3*time.Second, func() bool {
		var v apiVertex
		if status, body := getJSON(t, base, vertexPath, &v); status != http.StatusOK {
			t.Fatalf("GET %s = %d %.300s, want 200", vertexPath, status, body)
		}
		if !lagsKnown(v) {
			// The first polls: lag needs the job's offsets and the log
			// ends, busy needs a metrics poll.
			return false
		}
		hot, hotLag, maxLag := hotSubtask(v)
		samples = append(samples, sample{hot, hotLag, maxLag})
		if hotLag != maxLag {
			t.Errorf("GET %s: busiest subtask %d has lag %d, but the largest subtask lag is %d", vertexPath, hot, hotLag, maxLag)
		}
		first, last := samples[0], samples[len(samples)-1]
		return len(samples) >= 3 && last.maxLag > first.maxLag && last.maxLag > 0
	})
	if !grew || len(samples) == 0 {
		t.Fatalf("max subtask lag of %s did not grow over %d samples 3 s apart: %+v", vertexPath, len(samples), samples)
	}
	hot := samples[len(samples)-1].hot
	for _, s := range samples {
		if s.hot != hot {
			t.Errorf("the busiest subtask changed between samples: %+v", samples)
			break
		}
	}
	t.Logf("hot subtask %d, lag samples %+v", hot, samples)

	// /metrics has the per-partition source lag with the job and vertex ids.
	var metrics string
	ok = waitUntil(t, 10*time.Second, 500*time.Millisecond, func() bool {
		resp, err := http.Get(base + "/metrics")
		if err != nil {
			t.Fatalf("GET /metrics: %v", err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		metrics = string(b)
		for line := range strings.Lines(metrics) {
			if strings.HasPrefix(line, "skewscope_source_partition_lag_records{") &&
				strings.Contains(line, `job_id="`+orders.ID+`"`) && strings.Contains(line, `vertex_id="`+vertexID+`"`) {
				return true
			}
		}
		return false
	})
	if !ok {
		t.Errorf("GET /metrics has no skewscope_source_partition_lag_records{job_id=%q, vertex_id=%q} sample:\n%.3000s", orders.ID, vertexID, metrics)
	}

	// The orders topic lists the job's consumer group with its commits.
	var topic apiTopic
	var last string
	ok = waitUntil(t, 15*time.Second, 500*time.Millisecond, func() bool {
		topic = apiTopic{}
		status, body := getJSON(t, base, "/api/v1/kafka/sandbox/topics/orders", &topic)
		last = fmt.Sprintf("%d %.800s", status, body)
		gi := slices.IndexFunc(topic.Groups, func(g apiTopicGroup) bool { return g.Name == "orders-enrichment" })
		if status != http.StatusOK || gi < 0 || len(topic.Partitions) == 0 {
			return false
		}
		committed := 0
		for _, p := range topic.Partitions {
			if len(p.Groups) != len(topic.Groups) || p.Groups[gi].Committed == nil {
				return false
			}
			if *p.Groups[gi].Committed > 0 {
				committed++
			}
		}
		return committed > 0
	})
	if !ok {
		t.Errorf("GET /api/v1/kafka/sandbox/topics/orders did not list group orders-enrichment with commits on every partition within 15s; last answer: %s", last)
	}

	// Restore the job at parallelism 6 from a savepoint.
	client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := client.PostForm(base+"/sandbox/restore", url.Values{"job": {"orders-enrichment"}, "parallelism": {"6"}})
	if err != nil {
		t.Fatalf("POST /sandbox/restore: %v", err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusSeeOther || resp.Header.Get("Location") != "/" {
		t.Fatalf("POST /sandbox/restore job=orders-enrichment parallelism=6 = %d Location %q %.300s, want 303 to /", resp.StatusCode, resp.Header.Get("Location"), body)
	}

	var restored apiVertex
	var newJob string
	ok = waitUntil(t, 20*time.Second, 500*time.Millisecond, func() bool {
		var jobs apiJobs
		if status, _ := getJSON(t, base, "/api/v1/jobs", &jobs); status != http.StatusOK {
			return false
		}
		oldFinished := false
		newJob = ""
		for _, j := range jobs.Jobs {
			switch {
			case j.ID == orders.ID:
				oldFinished = j.State == "FINISHED"
			case j.Name == "orders-enrichment" && j.State == "RUNNING":
				newJob = j.ID
			}
		}
		if !oldFinished || newJob == "" {
			last = fmt.Sprintf("jobs %+v", jobs.Jobs)
			return false
		}
		restored = apiVertex{}
		status, body := getJSON(t, base, "/api/v1/jobs/"+newJob+"/vertices/"+vertexID, &restored)
		last = fmt.Sprintf("vertex %d %.800s", status, body)
		p := restored.Prediction
		return status == http.StatusOK && restored.Parallelism == 6 && len(restored.Subtasks) == 6 &&
			p.Mode == "restore" && slices.Equal(p.History, []int{4, 6})
	})
	if !ok {
		t.Fatalf("after the restore, no FINISHED old job and RUNNING new orders-enrichment job whose source has parallelism 6 and a restore prediction with history [4 6] within 20s; last: %s", last)
	}
	// inventory.events grows every 45 s. Restored before it grew, the model
	// is exact; after, the saved split lists are not known exactly and every
	// owner is a best guess, never counted as drift.
	switch p := restored.Prediction; {
	case p.Uncertain == 0:
		if p.Drift != 0 || p.Matched != p.Total || p.Total != owned {
			t.Errorf("restored job %s: prediction = %+v, want drift 0 and matched = total = %d", newJob, p, owned)
		}
	case p.Uncertain != p.Total || p.Drift != 0 || p.Total < owned:
		t.Errorf("restored job %s after partitions were discovered: prediction = %+v, want every one of ≥ %d owners uncertain and no drift", newJob, p, owned)
	}

	// SIGTERM: a clean exit, code 0.
	if err := d.stop(t, 15*time.Second); err != nil {
		t.Errorf("dashboard exit after SIGTERM = %v, want code 0; stderr:\n%s", err, d.stderr.String())
	}
	if log := d.stderr.String(); !strings.Contains(log, "msg=stopped") {
		t.Errorf("dashboard log has no stop line after SIGTERM:\n%s", log)
	}
}

// With --sandbox=false and nothing configured the dashboard is the planner
// alone: the home page, and no live data in the API.
func TestNoSandboxNoLiveData(t *testing.T) {
	bin := buildDashboard(t)
	d := startDashboard(t, bin, "--listen", "127.0.0.1:0", "--sandbox=false")

	status, body := getJSON(t, d.Base, "/", nil)
	if status != http.StatusOK || !strings.Contains(body, `data-testid="home"`) || !strings.Contains(body, `data-testid="home-plan"`) {
		t.Errorf("GET / = %d, want 200 with the planner home (data-testid home, home-plan):\n%.1000s", status, body)
	}
	if strings.Contains(body, `data-testid="livebar"`) {
		t.Errorf("GET / without live data shows a live bar:\n%.1000s", body)
	}

	resp, err := http.Get(d.Base + "/api/v1/overview")
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	var apiErr struct {
		Error string `json:"error"`
	}
	if resp.StatusCode != http.StatusNotFound || !strings.HasPrefix(resp.Header.Get("Content-Type"), "application/json") {
		t.Errorf("GET /api/v1/overview = %d %s %s, want 404 application/json", resp.StatusCode, resp.Header.Get("Content-Type"), raw)
	}
	if err := json.Unmarshal(raw, &apiErr); err != nil || apiErr.Error == "" {
		t.Errorf("GET /api/v1/overview body = %s (%v), want {\"error\": ...}", raw, err)
	}

	if status, body := getJSON(t, d.Base, "/api/v1/jobs", nil); status != http.StatusNotFound {
		t.Errorf("GET /api/v1/jobs = %d %.300s, want 404", status, body)
	}
	resp, err = http.PostForm(d.Base+"/sandbox/restore", url.Values{"job": {"orders-enrichment"}, "parallelism": {"6"}})
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusNotFound {
		t.Errorf("POST /sandbox/restore without the sandbox = %d, want 404", resp.StatusCode)
	}
	_, metrics := getJSON(t, d.Base, "/metrics", nil)
	if strings.Contains(metrics, "skewscope_source_partition_lag_records{") {
		t.Errorf("GET /metrics without live data has source lag samples:\n%.2000s", metrics)
	}

	var exit *exec.ExitError
	if err := d.stop(t, 15*time.Second); err != nil {
		if errors.As(err, &exit) {
			t.Errorf("dashboard --sandbox=false exit after SIGTERM = code %d, want 0; stderr:\n%s", exit.ExitCode(), d.stderr.String())
		} else {
			t.Errorf("dashboard --sandbox=false after SIGTERM: %v", err)
		}
	}
}
