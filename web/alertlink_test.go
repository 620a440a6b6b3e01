package web

import (
	"bytes"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"gopkg.in/yaml.v3"
)

// promtool is Prometheus's rule tester: $SKEWSCOPE_PROMTOOL, or promtool
// on PATH (Debian's prometheus package installs it).
func promtool(t *testing.T) string {
	t.Helper()
	if p := os.Getenv("SKEWSCOPE_PROMTOOL"); p != "" {
		return p
	}
	p, err := exec.LookPath("promtool")
	if err != nil {
		msg := "promtool not found (apt-get install prometheus, or set SKEWSCOPE_PROMTOOL): the README's alert rule is not expanded"
		if os.Getenv("SKEWSCOPE_REQUIRE_PROMTOOL") != "" {
			t.Fatal(msg) // make test installs it: missing is a failure there
		}
		t.Skip(msg)
	}
	return p
}

// readmeAlertRule is the README's alert rule whose link is by name.
func readmeAlertRule(t *testing.T) map[string]any {
	t.Helper()
	b, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, block := range strings.Split(string(b), "```yaml\n")[1:] {
		block, _, _ = strings.Cut(block, "```")
		if !strings.Contains(block, "/jobs/by-name/") {
			continue
		}
		var rules []map[string]any
		if err := yaml.Unmarshal([]byte(block), &rules); err != nil || len(rules) != 1 {
			t.Fatalf("README's by-name alert rule does not parse as one rule: %v\n%s", err, block)
		}
		return rules[0]
	}
	t.Fatal("README has no alert rule linking to /jobs/by-name/")
	return nil
}

// TestReadmeAlertLinkFollowsTheJobAcrossRestores expands the README's alert
// rule with Prometheus's own template engine (promtool test rules), for a
// job and vertex whose names need escaping, and follows the link it writes.
func TestReadmeAlertLinkFollowsTheJobAcrossRestores(t *testing.T) {
	tool := promtool(t)
	rule := readmeAlertRule(t)
	ann, _ := rule["annotations"].(map[string]any)
	link, _ := ann["skewscope"].(string)
	if link == "" {
		t.Fatal("README's rule has no skewscope annotation")
	}
	// Only the link is checked: promtool compares every annotation.
	rule["annotations"] = map[string]any{"skewscope": link}

	const base = "https://tools.example.com/skewscope"
	labels := map[string]string{"endpoint": "jm", "job_name": slashy, "vertex_name": "Enrich", "subtask": "1"}
	if rl, ok := rule["labels"].(map[string]any); ok {
		for k, v := range rl {
			labels[k], _ = v.(string) // the rule's own labels (severity)
		}
	}
	want := base + "/jobs/by-name/" + url.QueryEscape(slashy) + "/vertices/Enrich?endpoint=jm&highlight=subtask:1"
	dir := t.TempDir()
	rules := map[string]any{"groups": []any{map[string]any{"name": "skewscope", "rules": []any{rule}}}}
	series := `skewscope_source_partition_lag_seconds{endpoint="jm",job_name="a/b + c",vertex_name="Enrich",subtask="1",partition="0"}`
	test := map[string]any{
		"rule_files":          []string{"rules.yml"},
		"evaluation_interval": "1m",
		"tests": []any{map[string]any{
			"interval":     "1m",
			"input_series": []any{map[string]any{"series": series, "values": "400x15"}},
			"alert_rule_test": []any{map[string]any{
				"eval_time": "10m",
				"alertname": rule["alert"],
				"exp_alerts": []any{map[string]any{
					"exp_labels":      labels,
					"exp_annotations": map[string]string{"skewscope": want},
				}},
			}},
		}},
	}
	for name, v := range map[string]any{"rules.yml": rules, "test.yml": test} {
		b, err := yaml.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	cmd := exec.Command(tool, "test", "rules", "test.yml")
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("promtool test rules: %v: the README's link does not expand to %s\n%s", err, want, out)
	}

	// The link, served under /skewscope, leads to the job's current run.
	at := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	st, _ := restoredStore(t, at)
	ts := restoredServer(t, st, at, "/skewscope")
	resp, body := getNoFollow(t, ts.URL+strings.TrimPrefix(want, "https://tools.example.com"))
	loc := "/skewscope/jobs/" + tOtherJob + "/vertices/" + tKeyed + "?endpoint=jm&highlight=subtask%3A1"
	if resp.StatusCode != http.StatusFound || resp.Header.Get("Location") != loc {
		t.Errorf("the alert link answers %d %q, want 302 to %s\n%.300s", resp.StatusCode, resp.Header.Get("Location"), loc, body)
	}
}

// TestMetricsPassPromtoolAndKeepTargetLabelsFree runs a real scrape of
// /metrics through Prometheus's own linter (promtool check metrics) and
// checks that no series carries a label Prometheus sets on every target
// (job, instance): Prometheus would rename it exported_job.
func TestMetricsPassPromtoolAndKeepTargetLabelsFree(t *testing.T) {
	tool := promtool(t)
	st := liveStore(t, time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC))
	ts := newLiveServer(t, st, nil)
	resp, err := http.Get(ts.URL + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	cmd := exec.Command(tool, "check", "metrics")
	cmd.Stdin = bytes.NewReader(body)
	if out, err := cmd.CombinedOutput(); err != nil || len(bytes.TrimSpace(out)) > 0 {
		t.Errorf("promtool check metrics: %v\n%s", err, out)
	}
	for _, line := range strings.Split(string(body), "\n") {
		if !strings.HasPrefix(line, "skewscope_") {
			continue
		}
		for _, l := range []string{`{job="`, `,job="`, `{instance="`, `,instance="`} {
			if strings.Contains(line, l) {
				t.Errorf("series with a target label: %s", line)
			}
		}
	}
}
