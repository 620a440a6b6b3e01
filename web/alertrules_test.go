package web

import (
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"gopkg.in/yaml.v3"
)

// The shipped alert rules, their promtool suite, and the base URL their
// links start with (the README's placeholder for --web.external-url).
const (
	alertRulesDir  = "../examples/prometheus"
	alertRulesFile = "alerts.yml"
	alertTestsFile = "alerts_test.yml"
	alertLinkBase  = "https://tools.example.com/skewscope"
)

type alertRules struct {
	Groups []struct {
		Name  string           `yaml:"name"`
		Rules []map[string]any `yaml:"rules"`
	} `yaml:"groups"`
}

type alertRuleTests struct {
	RuleFiles []string `yaml:"rule_files"`
	Tests     []struct {
		Name       string `yaml:"name"`
		AlertTests []struct {
			EvalTime  string `yaml:"eval_time"`
			Alertname string `yaml:"alertname"`
			ExpAlerts []struct {
				Labels      map[string]string `yaml:"exp_labels"`
				Annotations map[string]string `yaml:"exp_annotations"`
			} `yaml:"exp_alerts"`
		} `yaml:"alert_rule_test"`
	} `yaml:"tests"`
}

func readYAML(t *testing.T, path string, v any) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := yaml.Unmarshal(b, v); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
}

// shippedAlertRules returns the rules of examples/prometheus/alerts.yml by
// alert name.
func shippedAlertRules(t *testing.T) map[string]map[string]any {
	t.Helper()
	var rf alertRules
	readYAML(t, filepath.Join(alertRulesDir, alertRulesFile), &rf)
	byName := map[string]map[string]any{}
	for _, g := range rf.Groups {
		for _, r := range g.Rules {
			name, _ := r["alert"].(string)
			if name == "" {
				t.Fatalf("%s: group %s has a rule that is not an alert: %v", alertRulesFile, g.Name, r)
			}
			if byName[name] != nil {
				t.Fatalf("%s: two alerts named %s", alertRulesFile, name)
			}
			byName[name] = r
		}
	}
	return byName
}

// TestShippedAlertRulesPassPromtool checks the shipped rules with
// Prometheus's own tools: promtool check rules (syntax, templates) and the
// promtool test rules suite, which fires each alert and compares its
// expanded annotations, links included.
func TestShippedAlertRulesPassPromtool(t *testing.T) {
	tool := promtool(t)
	for _, args := range [][]string{{"check", "rules", alertRulesFile}, {"test", "rules", alertTestsFile}} {
		cmd := exec.Command(tool, args...)
		cmd.Dir = alertRulesDir
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Errorf("promtool %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
}

// TestShippedAlertRulesAreTestedAndLink checks what promtool cannot: that
// the suite covers every alert, firing and quiet, with every annotation,
// and that each expected link is the page the alert's labels name, with
// the row highlighted, as skewscope reads the link.
func TestShippedAlertRulesAreTestedAndLink(t *testing.T) {
	rules := shippedAlertRules(t)
	for name, r := range rules {
		ann, _ := r["annotations"].(map[string]any)
		for _, k := range []string{"summary", "description", "skewscope"} {
			if s, _ := ann[k].(string); s == "" {
				t.Errorf("%s has no %s annotation", name, k)
			}
		}
		link, _ := ann["skewscope"].(string)
		if !strings.HasPrefix(link, alertLinkBase+"/") {
			t.Errorf("%s: link %q does not start with %s/, the placeholder for --web.external-url", name, link, alertLinkBase)
		}
		if strings.Contains(link, "/jobs/by-name/") {
			for _, k := range []string{"summary", "description"} {
				if s, _ := ann[k].(string); !strings.Contains(s, "$labels.job_name") {
					t.Errorf("%s: the %s does not name the Flink job ($labels.job_name): %q", name, k, s)
				}
			}
		}
	}

	var suite alertRuleTests
	readYAML(t, filepath.Join(alertRulesDir, alertTestsFile), &suite)
	if len(suite.RuleFiles) != 1 || suite.RuleFiles[0] != alertRulesFile {
		t.Errorf("%s tests rule files %q, want [%s]", alertTestsFile, suite.RuleFiles, alertRulesFile)
	}
	s, err := NewServer(Options{RoutePrefix: "/skewscope"})
	if err != nil {
		t.Fatal(err)
	}
	fired, quiet := map[string]bool{}, map[string]bool{}
	for _, tc := range suite.Tests {
		for _, at := range tc.AlertTests {
			if rules[at.Alertname] == nil {
				t.Errorf("%s: test %q at %s names alert %s, which %s does not have", alertTestsFile, tc.Name, at.EvalTime, at.Alertname, alertRulesFile)
				continue
			}
			if len(at.ExpAlerts) == 0 {
				quiet[at.Alertname] = true
			}
			for _, a := range at.ExpAlerts {
				fired[at.Alertname] = true
				where := tc.Name + " at " + at.EvalTime
				for _, k := range []string{"summary", "description", "skewscope"} {
					if a.Annotations[k] == "" {
						t.Errorf("%s: %s: expected %s has no %s annotation", alertTestsFile, where, at.Alertname, k)
					}
				}
				if job := a.Labels["job_name"]; job != "" && !strings.Contains(a.Annotations["summary"], job) {
					t.Errorf("%s: %s: %s's summary %q does not name the job %q", alertTestsFile, where, at.Alertname, a.Annotations["summary"], job)
				}
				if err := checkAlertLink(s, a.Annotations["skewscope"], a.Labels); err != "" {
					t.Errorf("%s: %s: %s: link %s: %s", alertTestsFile, where, at.Alertname, a.Annotations["skewscope"], err)
				}
			}
		}
	}
	for name := range rules {
		if !fired[name] {
			t.Errorf("%s has no test in which %s fires", alertTestsFile, name)
		}
		if !quiet[name] {
			t.Errorf("%s has no test in which %s stays quiet", alertTestsFile, name)
		}
	}
}

// checkAlertLink returns what is wrong with an expanded alert link, "" when
// nothing is: a job alert's link opens its vertex by name on its endpoint,
// highlighting the subtask (or the partition) of the labels, as skewscope
// reads the link; any other alert's opens the overview.
func checkAlertLink(s *Server, link string, labels map[string]string) string {
	u, err := url.Parse(link)
	if err != nil {
		return err.Error()
	}
	path, ok := strings.CutPrefix(link, alertLinkBase)
	if !ok {
		return "does not start with " + alertLinkBase
	}
	if labels["job_name"] == "" {
		if path != "/" {
			return "want the overview, " + alertLinkBase + "/"
		}
		return ""
	}
	job, vertex, err := s.byName(httptest.NewRequest("GET", u.RequestURI(), nil), false)
	switch {
	case err != nil:
		return "skewscope does not read it: " + err.Error()
	case job != labels["job_name"] || vertex != labels["vertex_name"]:
		return "names job " + strconv.Quote(job) + " vertex " + strconv.Quote(vertex) + ", want " +
			strconv.Quote(labels["job_name"]) + " and " + strconv.Quote(labels["vertex_name"])
	case u.Query().Get("endpoint") != labels["endpoint"]:
		return "endpoint=" + u.Query().Get("endpoint") + ", want " + labels["endpoint"]
	}
	vq, err := vertexQuery(u.Query())
	if err != nil {
		return "skewscope refuses its query: " + err.Error()
	}
	wantSubtask := -1
	if labels["subtask"] != "" && labels["partition"] == "" {
		wantSubtask, _ = strconv.Atoi(labels["subtask"])
	}
	wantPartition := ""
	if labels["partition"] != "" {
		wantPartition = labels["topic"] + ":" + labels["partition"]
	}
	gotPartition := ""
	if vq.HighlightTopic != "" {
		gotPartition = vq.HighlightTopic + ":" + strconv.Itoa(int(vq.HighlightPartition))
	}
	if vq.Highlight != wantSubtask || gotPartition != wantPartition {
		return "highlights subtask " + strconv.Itoa(vq.Highlight) + " partition " + strconv.Quote(gotPartition) +
			", want subtask " + strconv.Itoa(wantSubtask) + " partition " + strconv.Quote(wantPartition) + " (-1, \"\": none)"
	}
	return ""
}

// TestReadmeAlertRuleIsShipped keeps the README's example rule the one
// examples/prometheus/alerts.yml ships.
func TestReadmeAlertRuleIsShipped(t *testing.T) {
	readme := readmeAlertRule(t)
	name, _ := readme["alert"].(string)
	shipped := shippedAlertRules(t)[name]
	if shipped == nil {
		t.Fatalf("README's alert %q is not in %s", name, alertRulesFile)
	}
	if d := cmp.Diff(shipped, readme); d != "" {
		t.Errorf("README's rule %s differs from %s's (-shipped +README):\n%s", name, alertRulesFile, d)
	}
}
