package main

import (
	"io"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/skewscope/skewscope/web"
)

// TestSampleSettings: the key sample settings from flags, environment and
// web.samples, a flag winning over the file.
func TestSampleSettings(t *testing.T) {
	file := writeConfig(t, t.TempDir(), `kafka:
  clusters:
    - name: prod
      brokers: [kafka:9092]
web:
  userHeader: X-Forwarded-User
  trustedProxies: [10.0.0.0/8]
  samples:
    enabled: false
    keys: hashed
    maxPerUser: 2
    topics: ['orders', 'clicks-.*']
    clusterTopics:
      prod: [payments]
`)
	type got struct {
		Opts   web.SampleOptions
		Header string
	}
	for _, tc := range []struct {
		args []string
		env  map[string]string
		want got
	}{
		{nil, nil, got{}},
		{[]string{"--config.file=" + file}, nil, got{web.SampleOptions{Off: true, OffBy: "web.samples.enabled: false", HashKeys: true, MaxPerUser: 2,
			Topics: []web.TopicRule{{Patterns: []string{"orders", "clicks-.*"}, Setting: "web.samples.topics"}, {Cluster: "prod", Patterns: []string{"payments"}, Setting: "web.samples.clusterTopics.prod"}}},
			"X-Forwarded-User"}},
		{[]string{"--config.file=" + file, "--samples.enabled", "--samples.keys=clear", "--samples.max-per-user=3", "--samples.topics=audit-.*", "--web.user-header=X-WEBAUTH-USER"}, nil,
			got{web.SampleOptions{MaxPerUser: 3,
				Topics: []web.TopicRule{{Patterns: []string{"audit-.*"}, Setting: "--samples.topics"}, {Cluster: "prod", Patterns: []string{"payments"}, Setting: "web.samples.clusterTopics.prod"}}},
				"X-WEBAUTH-USER"}},
		{[]string{"--samples.enabled=false"}, map[string]string{"SKEWSCOPE_SAMPLES_KEYS": "hashed", "SKEWSCOPE_WEB_USER_HEADER": "X-Auth-Request-User"},
			got{web.SampleOptions{Off: true, OffBy: "--samples.enabled=false", HashKeys: true}, "X-Auth-Request-User"}},
	} {
		c, err := parseConfig(tc.args, envMap(tc.env), io.Discard)
		if err != nil {
			t.Errorf("parseConfig(%q, %v) = %v", tc.args, tc.env, err)
			continue
		}
		if diff := cmp.Diff(tc.want, got{c.Samples, c.UserHeader}); diff != "" {
			t.Errorf("parseConfig(%q, %v) (-want +got):\n%s", tc.args, tc.env, diff)
		}
	}
	c, err := parseConfig([]string{"--web.user-header=X-Forwarded-User"}, noEnv, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if w := c.warnings(); len(w) != 1 || !strings.Contains(w[0], "the header is ignored and every key sample is anonymous") {
		t.Errorf("warnings() with a user header and no trusted proxy = %q", w)
	}
}

// TestSampleSettingErrors: bad values stop the start, each message naming
// its flag or YAML path.
func TestSampleSettingErrors(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		args []string
		yaml string
		want string
	}{
		{[]string{"--samples.keys=masked"}, "", `--samples.keys: "masked": want clear or hashed`},
		{[]string{"--samples.enabled=maybe"}, "", `invalid boolean value "maybe" for -samples.enabled`},
		{[]string{"--samples.max-per-user=0"}, "", `--samples.max-per-user="0": want a whole number from 1 to 16`},
		{[]string{"--samples.max-per-user=all"}, "", `--samples.max-per-user="all": want a whole number`},
		{[]string{"--samples.topics=orders,(bad"}, "", `--samples.topics[1]: topic pattern "(bad": error parsing regexp`},
		{[]string{"--web.user-header=X User"}, "", `--web.user-header: "X User": not an HTTP header name`},
		{nil, "web:\n  samples:\n    keys: secret\n", `web.samples.keys: "secret": want clear or hashed`},
		{nil, "web:\n  samples:\n    maxPerUser: 17\n", "web.samples.maxPerUser: 17: want a whole number from 1 to 16"},
		{nil, "web:\n  samples:\n    topics: ['[a-']\n", `web.samples.topics[0]: topic pattern "[a-"`},
		{nil, "web:\n  samples:\n    clusterTopics:\n      staging: [x]\n", `web.samples.clusterTopics.staging: no Kafka cluster "staging" is configured`},
		{nil, "web:\n  samples:\n    allow: [x]\n", "field allow not found in web.samples (known keys: enabled, keys, maxPerUser, topics, clusterTopics)"},
	} {
		args := tc.args
		if tc.yaml != "" {
			args = append(args, "--config.file="+writeConfig(t, dir, tc.yaml))
		}
		_, err := parseConfig(args, noEnv, io.Discard)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("parseConfig(%q) with file %q error = %v, want one containing %q", tc.args, tc.yaml, err, tc.want)
		}
	}
}
