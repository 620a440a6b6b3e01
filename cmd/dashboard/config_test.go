package main

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"flag"
	"io"
	"log/slog"
	"math/big"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/skewscope/skewscope/collectors/flink"
	"github.com/skewscope/skewscope/collectors/kafka"
)

// secretFiles writes the files configs in these tests refer to into a
// temporary directory: a CA, a client certificate and key, secrets, an
// empty file and a file that is not PEM.
func secretFiles(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1),
		Subject:      pkix.Name{CommonName: "skewscope test"},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(time.Hour),
		IsCA:         true, BasicConstraintsValid: true,
		KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	certPEM := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
	keyPEM := pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: keyDER})
	for name, content := range map[string][]byte{
		"ca.pem":         certPEM,
		"client.pem":     certPEM,
		"client-key.pem": keyPEM,
		"password":       []byte("s3cret-from-file\n"),
		"token":          []byte("token-from-file\n"),
		"empty":          nil,
		"not-pem":        []byte("hello\n"),
	} {
		if err := os.WriteFile(filepath.Join(dir, name), content, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// writeConfig writes yaml (with $DIR replaced by dir) to dir/skewscope.yaml.
func writeConfig(t *testing.T, dir, yaml string) string {
	t.Helper()
	name := filepath.Join(dir, "skewscope.yaml")
	if err := os.WriteFile(name, []byte(strings.ReplaceAll(yaml, "$DIR", dir)), 0o600); err != nil {
		t.Fatal(err)
	}
	return name
}

func noEnv(string) string { return "" }

func envMap(m map[string]string) func(string) string {
	return func(k string) string { return m[k] }
}

// TestEnvNames checks that every flag has a SKEWSCOPE_ variable, named as
// the README lists the existing ones.
func TestEnvNames(t *testing.T) {
	for flagName, want := range map[string]string{
		"listen":                        "SKEWSCOPE_LISTEN",
		"log.format":                    "SKEWSCOPE_LOG_FORMAT",
		"log.level":                     "SKEWSCOPE_LOG_LEVEL",
		"web.external-url":              "SKEWSCOPE_WEB_EXTERNAL_URL",
		"web.route-prefix":              "SKEWSCOPE_WEB_ROUTE_PREFIX",
		"web.frame-ancestors":           "SKEWSCOPE_WEB_FRAME_ANCESTORS",
		"web.allowed-origins":           "SKEWSCOPE_WEB_ALLOWED_ORIGINS",
		"web.ws-max-per-address":        "SKEWSCOPE_WEB_WS_MAX_PER_ADDRESS",
		"web.ws-max-topics-per-address": "SKEWSCOPE_WEB_WS_MAX_TOPICS_PER_ADDRESS",
		"web.trusted-proxies":           "SKEWSCOPE_WEB_TRUSTED_PROXIES",
		"config.file":                   "SKEWSCOPE_CONFIG_FILE",
		"kafka.brokers":                 "SKEWSCOPE_KAFKA_BROKERS",
		"kafka.name":                    "SKEWSCOPE_KAFKA_NAME",
		"flink.url":                     "SKEWSCOPE_FLINK_URL",
		"flink.name":                    "SKEWSCOPE_FLINK_NAME",
		"sandbox":                       "SKEWSCOPE_SANDBOX",
		"samples.enabled":               "SKEWSCOPE_SAMPLES_ENABLED",
		"samples.keys":                  "SKEWSCOPE_SAMPLES_KEYS",
		"samples.topics":                "SKEWSCOPE_SAMPLES_TOPICS",
		"samples.max-per-user":          "SKEWSCOPE_SAMPLES_MAX_PER_USER",
		"web.user-header":               "SKEWSCOPE_WEB_USER_HEADER",
		"web.allowed-hosts":             "SKEWSCOPE_WEB_ALLOWED_HOSTS",
	} {
		if got := envName(flagName); got != want {
			t.Errorf("envName(%q) = %q, want %q", flagName, got, want)
		}
	}
	var f flagValues
	fs := newFlagSet(&f, io.Discard)
	fs.VisitAll(func(fl *flag.Flag) {
		if !strings.Contains(fl.Usage, "(env "+envName(fl.Name)+")") {
			t.Errorf("usage of --%s = %q, want it to name %s", fl.Name, fl.Usage, envName(fl.Name))
		}
	})
}

// TestParseConfigPrecedence covers defaults, flag over env, and the quick
// single-backend flags.
func TestParseConfigPrecedence(t *testing.T) {
	for _, tc := range []struct {
		name  string
		args  []string
		env   map[string]string
		check func(t *testing.T, c appConfig)
	}{
		{"defaults", nil, nil, func(t *testing.T, c appConfig) {
			if c.Listen != "127.0.0.1:8080" || c.LogFormat != "text" || c.LogLevel != slog.LevelInfo || c.ExternalURL != nil || c.RoutePrefix != "" || !c.Sandbox || len(c.Kafka)+len(c.Flink) != 0 {
				t.Errorf("defaults = %+v", c)
			}
		}},
		{"env sets allowed origins, normalised", nil, map[string]string{"SKEWSCOPE_WEB_ALLOWED_ORIGINS": "HTTPS://Portal.Example.com:443/, http://a.example:8080,https://portal.example.com"}, func(t *testing.T, c appConfig) {
			if diff := cmp.Diff([]string{"https://portal.example.com", "http://a.example:8080"}, c.AllowedOrigins); diff != "" {
				t.Errorf("AllowedOrigins (-want +got):\n%s", diff)
			}
		}},
		{"flag beats env for allowed origins", []string{"--web.allowed-origins=https://b.example"}, map[string]string{"SKEWSCOPE_WEB_ALLOWED_ORIGINS": "https://a.example"}, func(t *testing.T, c appConfig) {
			if diff := cmp.Diff([]string{"https://b.example"}, c.AllowedOrigins); diff != "" {
				t.Errorf("AllowedOrigins (-want +got):\n%s", diff)
			}
		}},
		{"external url gives the route prefix", []string{"--web.external-url=https://tools.example.com/skewscope/"}, nil, func(t *testing.T, c appConfig) {
			if c.RoutePrefix != "/skewscope" || c.ExternalURL.String() != "https://tools.example.com/skewscope" {
				t.Errorf("RoutePrefix = %q, ExternalURL = %v", c.RoutePrefix, c.ExternalURL)
			}
		}},
		{"route prefix flag beats the external url path", []string{"--web.external-url=https://tools.example.com/skewscope", "--web.route-prefix=/"}, nil, func(t *testing.T, c appConfig) {
			if c.RoutePrefix != "" {
				t.Errorf("RoutePrefix = %q, want empty", c.RoutePrefix)
			}
		}},
		{"frame ancestors split", nil, map[string]string{"SKEWSCOPE_WEB_FRAME_ANCESTORS": "https://portal.example.com, 'self'"}, func(t *testing.T, c appConfig) {
			if diff := cmp.Diff([]string{"https://portal.example.com", "'self'"}, c.FrameAncestors); diff != "" {
				t.Errorf("FrameAncestors (-want +got):\n%s", diff)
			}
		}},
		{"quick kafka flag", []string{"--kafka.brokers", "k0:9092, k1:9092"}, nil, func(t *testing.T, c appConfig) {
			want := []kafka.Config{kafka.Config{Name: "default", Brokers: []string{"k0:9092", "k1:9092"}}.WithDefaults()}
			if diff := cmp.Diff(want, c.Kafka); diff != "" {
				t.Errorf("Kafka (-want +got):\n%s", diff)
			}
			if c.Sandbox {
				t.Error("Sandbox = true with a cluster configured")
			}
		}},
		{"quick flags from env with names", nil, map[string]string{
			"SKEWSCOPE_KAFKA_BROKERS": "k0:9092", "SKEWSCOPE_KAFKA_NAME": "local",
			"SKEWSCOPE_FLINK_URL": "http://localhost:8081", "SKEWSCOPE_FLINK_NAME": "jm",
		}, func(t *testing.T, c appConfig) {
			if len(c.Kafka) != 1 || c.Kafka[0].Name != "local" {
				t.Errorf("Kafka = %+v, want one cluster named local", c.Kafka)
			}
			want := []flink.Config{flink.Config{Name: "jm", URL: "http://localhost:8081"}.WithDefaults()}
			if diff := cmp.Diff(want, c.Flink); diff != "" {
				t.Errorf("Flink (-want +got):\n%s", diff)
			}
		}},
		{"quick flink flag beats env", []string{"--flink.url=http://flag:8081"}, map[string]string{"SKEWSCOPE_FLINK_URL": "http://env:8081"}, func(t *testing.T, c appConfig) {
			if len(c.Flink) != 1 || c.Flink[0].URL != "http://flag:8081" || c.Flink[0].Name != "default" {
				t.Errorf("Flink = %+v, want the flag's endpoint named default", c.Flink)
			}
		}},
		{"sandbox from env", nil, map[string]string{"SKEWSCOPE_SANDBOX": "false"}, func(t *testing.T, c appConfig) {
			if c.Sandbox {
				t.Error("Sandbox = true, want false from SKEWSCOPE_SANDBOX")
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := parseConfig(tc.args, envMap(tc.env), io.Discard)
			if err != nil {
				t.Fatalf("parseConfig(%q, %v) error = %v", tc.args, tc.env, err)
			}
			tc.check(t, c)
		})
	}
}

// TestEnvDoesNotChangeFileEntries: the quick-flag environment variables add
// their own backend; they never modify entries from the file.
func TestEnvDoesNotChangeFileEntries(t *testing.T) {
	dir := t.TempDir()
	file := writeConfig(t, dir, "kafka:\n  clusters:\n    - name: prod\n      brokers: [p0:9092]\n")
	c, err := parseConfig([]string{"--config.file", file}, envMap(map[string]string{"SKEWSCOPE_KAFKA_BROKERS": "e0:9092", "SKEWSCOPE_KAFKA_NAME": "env"}), io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	var got [][]string
	for _, k := range c.Kafka {
		got = append(got, append([]string{k.Name}, k.Brokers...))
	}
	if diff := cmp.Diff([][]string{{"prod", "p0:9092"}, {"env", "e0:9092"}}, got); diff != "" {
		t.Errorf("clusters (-want +got):\n%s", diff)
	}
	if c.ConfigFile != file {
		t.Errorf("ConfigFile = %q, want %q", c.ConfigFile, file)
	}

	// The config file itself may come from the environment.
	c, err = parseConfig(nil, envMap(map[string]string{"SKEWSCOPE_CONFIG_FILE": file}), io.Discard)
	if err != nil || len(c.Kafka) != 1 || c.Kafka[0].Name != "prod" {
		t.Errorf("SKEWSCOPE_CONFIG_FILE: got %+v, %v; want the prod cluster", c.Kafka, err)
	}
}

// TestConfigFileStrict: unknown keys, wrong types and bad durations are
// errors with the file name, line number and the YAML path.
func TestConfigFileStrict(t *testing.T) {
	for _, tc := range []struct {
		name, yaml string
		want       []string
	}{
		{"typo in a cluster", "kafka:\n  clusters:\n    - name: a\n      broker: [x:1]\n",
			[]string{"line 4: field broker not found in kafka.clusters[] (known keys: name, brokers,"}},
		{"typo at the top", "kafak: {}\n", []string{"line 1: field kafak not found in the top level (known keys: kafka, flink, links, web)"}},
		{"typo in sasl oauth", "kafka:\n  clusters:\n    - name: a\n      brokers: [x:1]\n      sasl:\n        oauth:\n          tokenUrl: x\n",
			[]string{"line 7: field tokenUrl not found in kafka.clusters[].sasl.oauth"}},
		{"typo in flink tls", "flink:\n  endpoints:\n    - name: a\n      url: https://a\n      tls:\n        insecureSkipTlsVerify: true\n",
			[]string{"line 6: field insecureSkipTlsVerify not found in flink.endpoints[].tls (known keys: caFilepath, certFilepath, keyFilepath, serverName, insecureSkipVerify)"}},
		{"typo in links", "links:\n  sourceGroups:\n    - endpoint: a\n      groupId: g\n", []string{"line 4: field groupId not found in links.sourceGroups[]"}},
		{"bad duration", "kafka:\n  clusters:\n    - name: a\n      brokers: [x:1]\n      pollInterval: 15x\n",
			[]string{"line 5: cannot unmarshal !!str `15x` into a duration (want e.g. 15s or 1m30s)"}},
		{"number as duration", "kafka:\n  clusters:\n    - name: a\n      brokers: [x:1]\n      requestTimeout: 10\n",
			[]string{"line 5:", "into a duration"}},
		{"scalar for a list", "kafka:\n  clusters:\n    - name: a\n      brokers: x:1\n", []string{"line 4: cannot unmarshal !!str `x:1` into []string"}},
		{"scalar for a section", "flink:\n  endpoints:\n    - name: f\n      url: https://a\n      authorization: x\n",
			[]string{"line 5: cannot unmarshal !!str `x` into flink.endpoints[].authorization, a mapping (known keys: bearerToken, bearerTokenFile)"}},
		{"scalar for the list of clusters", "kafka:\n  clusters: x\n", []string{"line 2: cannot unmarshal !!str `x` into kafka.clusters, a list"}},
		{"list for a section", "kafka: [1]\n", []string{"line 1: cannot unmarshal !!seq into kafka, a mapping (known keys: clusters)"}},
		{"list at the top", "[]\n", []string{"line 1: cannot unmarshal !!seq into the top level, a mapping (known keys: kafka, flink, links, web)"}},
		{"two typos, both reported", "kafka:\n  clusters:\n    - nam: a\n      brokerz: [x:1]\n",
			[]string{"line 3: field nam not found", "line 4: field brokerz not found"}},
		{"syntax error", "kafka:\n\tclusters: []\n", []string{"line 2: found character that cannot start any token"}},
		{"second document", "kafka: {}\n---\nflink: {}\n", []string{"line 2: a second YAML document"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			file := writeConfig(t, t.TempDir(), tc.yaml)
			_, err := parseConfig([]string{"--config.file=" + file}, noEnv, io.Discard)
			if err == nil {
				t.Fatalf("parseConfig(%q) error = nil, want %q", tc.yaml, tc.want)
			}
			for _, w := range append(tc.want, file+": ") {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("parseConfig(%q) error =\n%v\nwant it to contain %q", tc.yaml, err, w)
				}
			}
			if strings.Contains(err.Error(), "main.") {
				t.Errorf("error names a Go type: %v", err)
			}
		})
	}
}

// TestConfigValidation: each problem is reported with its YAML path, all of
// them in one error.
func TestConfigValidation(t *testing.T) {
	const head = "kafka:\n  clusters:\n"
	for _, tc := range []struct {
		name, yaml string
		want       []string
	}{
		{"duplicate kafka name",
			head + "    - {name: a, brokers: [x:1]}\n    - {name: a, brokers: [y:1]}\n",
			[]string{`kafka.clusters[1].name: kafka cluster name "a" is already used by kafka.clusters[0]`}},
		{"duplicate flink name",
			"flink:\n  endpoints:\n    - {name: f, url: 'http://a:8081'}\n    - {name: f, url: 'http://b:8081'}\n",
			[]string{`flink.endpoints[1].name: flink endpoint name "f" is already used by flink.endpoints[0]`}},
		{"flink names an unknown kafka cluster",
			head + "    - {name: a, brokers: [x:1]}\nflink:\n  endpoints:\n    - {name: f, url: 'http://a:8081', kafka: b}\n",
			[]string{`flink.endpoints[0].kafka: no kafka cluster is named "b" (known: "a")`}},
		{"kafka: missing name and brokers",
			head + "    - {clientId: x}\n",
			[]string{"kafka.clusters[0].name: must not be empty", "kafka.clusters[0].brokers: at least one broker"}},
		{"kafka: negative duration",
			head + "    - {name: a, brokers: [x:1], pollInterval: -5s}\n",
			[]string{"kafka.clusters[0].pollInterval: must be positive, got -5s"}},
		{"kafka: password and passwordFile",
			head + "    - name: a\n      brokers: [x:1]\n      sasl: {mechanism: PLAIN, username: u, password: p, passwordFile: $DIR/password}\n",
			[]string{"kafka.clusters[0].sasl.password: give password or passwordFile, not both"}},
		{"kafka: unreadable passwordFile",
			head + "    - {name: a, brokers: [x:1]}\n    - name: b\n      brokers: [x:1]\n      sasl: {mechanism: SCRAM-SHA-256, username: u, passwordFile: /nonexistent/pw}\n",
			[]string{"kafka.clusters[1].sasl.passwordFile: open /nonexistent/pw: no such file or directory"}},
		{"kafka: empty passwordFile",
			head + "    - name: a\n      brokers: [x:1]\n      sasl: {mechanism: PLAIN, username: u, passwordFile: $DIR/empty}\n",
			[]string{"kafka.clusters[0].sasl.passwordFile: $DIR/empty is empty"}},
		{"kafka: unknown mechanism",
			head + "    - name: a\n      brokers: [x:1]\n      sasl: {mechanism: GSSAPI, username: u}\n",
			[]string{`kafka.clusters[0].sasl.mechanism: unsupported "GSSAPI"`}},
		{"kafka: CA is not PEM",
			head + "    - name: a\n      brokers: [x:1]\n      tls: {enabled: true, caFilepath: $DIR/not-pem}\n",
			[]string{"kafka.clusters[0].tls.caFilepath: $DIR/not-pem: no PEM certificate found"}},
		{"kafka: cert without key",
			head + "    - name: a\n      brokers: [x:1]\n      tls: {enabled: true, certFilepath: $DIR/client.pem}\n",
			[]string{"kafka.clusters[0].tls: certFilepath and keyFilepath must be given together"}},
		{"kafka: key that does not fit",
			head + "    - name: a\n      brokers: [x:1]\n      tls: {enabled: true, certFilepath: $DIR/client.pem, keyFilepath: $DIR/not-pem}\n",
			[]string{"kafka.clusters[0].tls.certFilepath: with keyFilepath:"}},
		{"kafka: tls files without enabled",
			head + "    - name: a\n      brokers: [x:1]\n      tls: {caFilepath: $DIR/ca.pem}\n",
			[]string{"kafka.clusters[0].tls: files given but tls is not enabled"}},
		{"kafka: bad group pattern",
			head + "    - name: a\n      brokers: [x:1]\n      groups: {allow: ['('], deny: ['ok', '[']}\n",
			[]string{"kafka.clusters[0].groups.allow[0]: bad pattern", "kafka.clusters[0].groups.deny[1]: bad pattern"}},
		{"kafka: oauthbearer with two token forms",
			head + "    - name: a\n      brokers: [x:1]\n      sasl: {mechanism: OAUTHBEARER, token: t, tokenFile: $DIR/token}\n",
			[]string{"kafka.clusters[0].sasl.token: give only one of token, tokenFile or oauth"}},
		{"kafka: oauth secret both ways and unreadable tokenFile",
			head + "    - name: a\n      brokers: [x:1]\n      sasl:\n        mechanism: OAUTHBEARER\n        oauth: {tokenEndpoint: 'https://idp/token', clientId: c, clientSecret: s, clientSecretFile: $DIR/password}\n" +
				"    - name: b\n      brokers: [x:1]\n      sasl: {mechanism: OAUTHBEARER, tokenFile: /nonexistent/token}\n",
			[]string{"kafka.clusters[0].sasl.oauth.clientSecret: give clientSecret or clientSecretFile, not both",
				"kafka.clusters[1].sasl.tokenFile: open /nonexistent/token"}},
		{"flink: bad url",
			"flink:\n  endpoints:\n    - {name: f, url: 'ftp://a'}\n    - {name: g}\n    - {name: h, url: 'https://u:pw@a'}\n",
			[]string{`flink.endpoints[0].url: "ftp://a": scheme must be http or https`, "flink.endpoints[1].url: required",
				"flink.endpoints[2].url: must not contain user info; use basicAuth"}},
		{"flink: request budget out of range",
			"flink:\n  endpoints:\n    - {name: f, url: 'http://a', maxInFlight: 500, maxRequestsPerSecond: -1, pollInterval: 10s, metricIdRefresh: 2s}\n",
			[]string{"flink.endpoints[0].maxInFlight: 500 is outside 1..64", "flink.endpoints[0].maxRequestsPerSecond: -1 is outside (0, 10000]",
				"flink.endpoints[0].metricIdRefresh: 2s is below the poll interval of 10s"}},
		{"flink: maxJobs out of range",
			"flink:\n  endpoints:\n    - {name: f, url: 'http://a', maxJobs: -5}\n",
			[]string{"flink.endpoints[0].maxJobs: -5 is outside 1..100000"}},
		{"flink: bearerToken and bearerTokenFile",
			"flink:\n  endpoints:\n    - name: f\n      url: https://a\n      authorization: {bearerToken: t, bearerTokenFile: $DIR/token}\n",
			[]string{"flink.endpoints[0]: authorization.bearerToken, authorization.bearerTokenFile, basicAuth: at most one may be set"}},
		{"flink: authorization and basicAuth",
			"flink:\n  endpoints:\n    - name: f\n      url: https://a\n      authorization: {bearerToken: t}\n      basicAuth: {username: u, password: p}\n",
			[]string{"flink.endpoints[0]: authorization.bearerToken, authorization.bearerTokenFile, basicAuth: at most one may be set"}},
		{"flink: empty authorization",
			"flink:\n  endpoints:\n    - name: f\n      url: https://a\n      authorization: {}\n",
			[]string{"flink.endpoints[0].authorization: give bearerToken or bearerTokenFile"}},
		{"flink: basicAuth problems",
			"flink:\n  endpoints:\n    - name: f\n      url: https://a\n      basicAuth: {password: p, passwordFile: /nonexistent/pw}\n",
			[]string{"flink.endpoints[0].basicAuth.username: required",
				"flink.endpoints[0]: basicAuth.password, basicAuth.passwordFile: at most one may be set",
				"flink.endpoints[0].basicAuth.passwordFile: open /nonexistent/pw: no such file or directory"}},
		{"flink: unreadable bearerTokenFile",
			"flink:\n  endpoints:\n    - name: f\n      url: https://a\n      authorization: {bearerTokenFile: /nonexistent/tok}\n",
			[]string{"flink.endpoints[0].authorization.bearerTokenFile: open /nonexistent/tok: no such file or directory"}},
		{"flink: tls with an http url",
			"flink:\n  endpoints:\n    - name: f\n      url: http://a:8081\n      tls: {caFilepath: $DIR/ca.pem}\n",
			[]string{`flink.endpoints[0].tls: given but url "http://a:8081" is not https`}},
		{"flink: bad CA and lone key and empty job and short poll",
			"flink:\n  endpoints:\n    - name: f\n      url: https://a\n      jobs: [a, '']\n      pollInterval: 100ms\n      tls: {caFilepath: $DIR/not-pem, keyFilepath: $DIR/client-key.pem}\n",
			[]string{"flink.endpoints[0].tls.caFilepath: $DIR/not-pem: no PEM certificate found",
				"flink.endpoints[0]: tls.certFilepath, tls.keyFilepath: set both or neither",
				"flink.endpoints[0].jobs[1]: empty",
				"flink.endpoints[0].pollInterval: 100ms is below the minimum"}},
		{"flink: webUI templates",
			"flink:\n  endpoints:\n    - name: f\n      url: http://a:8081\n      webUI:\n        job: 'https://ui.example.com/#/job/running/{jobId}/overview'\n" +
				"        vertex: 'ftp://ui.example.com/{job}/{vertex}'\n        subtask: 'https://ui.example.com/#/job/running/{job}/overview/{vertex}/subtasks'\n" +
				"    - name: g\n      url: http://b:8081\n      webUI: {base: 'https://ui.example.com/?x=1', vertex: 'https://{endpoint}.example.com/{vertex}'}\n",
			[]string{`flink.endpoints[0].webUI.job: "https://ui.example.com/#/job/running/{jobId}/overview": unknown placeholder {jobId}: this link knows {endpoint}, {job}`,
				`flink.endpoints[0].webUI.vertex: "ftp://ui.example.com/{job}/{vertex}": want an absolute http or https URL`,
				`flink.endpoints[0].webUI.subtask: "https://ui.example.com/#/job/running/{job}/overview/{vertex}/subtasks": has no {subtask}`,
				`flink.endpoints[1].webUI.base: "https://ui.example.com/?x=1": must not have a query or fragment`,
				`flink.endpoints[1].webUI.vertex: "https://{endpoint}.example.com/{vertex}": placeholders go in the path, query or fragment, not in the scheme or host`}},
		{"flink: webUI off with templates",
			"flink:\n  endpoints:\n    - {name: f, url: 'http://a:8081', webUI: {enabled: false, base: 'https://ui.example.com/'}}\n",
			[]string{"flink.endpoints[0].webUI.enabled: false, but webUI also gives templates: drop them, or enabled"}},
		{"kafka: ui templates",
			head + "    - name: a\n      brokers: [x:1]\n      ui: {topic: 'https://akhq/ui/{cluster}/topic/{group}', group: 'https://akhq/ui/{cluster}/group/{group'}\n",
			[]string{`kafka.clusters[0].ui.topic: "https://akhq/ui/{cluster}/topic/{group}": unknown placeholder {group}: this link knows {cluster}, {topic}`,
				`kafka.clusters[0].ui.group: "https://akhq/ui/{cluster}/group/{group": a { without its }`}},
		{"kafka: unknown ui key",
			head + "    - name: a\n      brokers: [x:1]\n      ui: {topics: 'https://akhq/ui/{cluster}/topic/{topic}'}\n",
			[]string{"field topics not found in kafka.clusters[].ui (known keys: topic, group)"}},
		{"links: unknown endpoint and empty fields and duplicate",
			"flink:\n  endpoints:\n    - {name: f, url: 'http://a:8081'}\nlinks:\n  sourceGroups:\n    - {endpoint: g, job: j, group: x}\n    - {endpoint: f}\n" +
				"    - {endpoint: f, job: j, vertex: v, group: a}\n    - {endpoint: f, job: j, vertex: v, group: b}\n",
			[]string{`links.sourceGroups[0].endpoint: no flink endpoint is named "g" (known: "f")`,
				"links.sourceGroups[1].job: must not be empty", "links.sourceGroups[1].group: must not be empty",
				`links.sourceGroups[3]: endpoint "f", job "j", vertex "v" is already linked by links.sourceGroups[2]`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := secretFiles(t)
			file := writeConfig(t, dir, tc.yaml)
			_, err := parseConfig([]string{"--config.file=" + file}, noEnv, io.Discard)
			if err == nil {
				t.Fatalf("parseConfig(%q) error = nil, want %q", tc.yaml, tc.want)
			}
			for _, w := range tc.want {
				if w = strings.ReplaceAll(w, "$DIR", dir); !strings.Contains(err.Error(), w) {
					t.Errorf("parseConfig(%q) error =\n%v\nwant it to contain %q", tc.yaml, err, w)
				}
			}
			if lines := strings.Count(err.Error(), "\n"); lines > 0 && !strings.Contains(err.Error(), " configuration problems:") {
				t.Errorf("multi-line error without a count: %v", err)
			}
			if strings.Contains(err.Error(), "kafka cluster \"") && !strings.Contains(tc.name, "duplicate") {
				t.Errorf("error keeps the collector's own prefix instead of the YAML path: %v", err)
			}
			if w := goNameIn(strings.ReplaceAll(err.Error(), dir, "$DIR")); w != "" {
				t.Errorf("error names the Go field %s: %v", w, err)
			}
		})
	}
}

// TestConfigValidationNoDuplicateFileMessages: a missing file is reported
// once (by the read check), not again by the collector's stat check.
func TestConfigValidationNoDuplicateFileMessages(t *testing.T) {
	file := writeConfig(t, t.TempDir(), "kafka:\n  clusters:\n    - name: a\n      brokers: [x:1]\n      tls: {enabled: true, caFilepath: /nonexistent/ca.pem}\n")
	_, err := parseConfig([]string{"--config.file=" + file}, noEnv, io.Discard)
	if err == nil || strings.Count(err.Error(), "tls.caFilepath") != 1 {
		t.Errorf("error = %v, want exactly one tls.caFilepath problem", err)
	}
}

// TestConfigAllProblemsInOneError: problems from flags and the file come
// together, counted.
func TestConfigAllProblemsInOneError(t *testing.T) {
	file := writeConfig(t, t.TempDir(), "kafka:\n  clusters:\n    - {name: a}\n    - {name: a, brokers: [x:1]}\n")
	_, err := parseConfig([]string{"--config.file=" + file, "--log.format=xml", "--web.allowed-origins=ftp://x"}, noEnv, io.Discard)
	if err == nil {
		t.Fatal("error = nil")
	}
	for _, w := range []string{"4 configuration problems:", "--log.format=\"xml\"", "--web.allowed-origins: \"ftp://x\"",
		"kafka.clusters[0].brokers:", "kafka.clusters[1].name: kafka cluster name \"a\" is already used"} {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("error =\n%v\nwant it to contain %q", err, w)
		}
	}
	msg := err.Error()
	if !(strings.Index(msg, "--log.format") < strings.Index(msg, "kafka.clusters[0]") && strings.Index(msg, "kafka.clusters[0]") < strings.Index(msg, "kafka.clusters[1]")) {
		t.Errorf("problems not ordered flags, then kafka.clusters[0], then [1]:\n%v", err)
	}
}

func TestConfigFlagErrors(t *testing.T) {
	dir := t.TempDir()
	file := writeConfig(t, dir, "kafka:\n  clusters:\n    - {name: default, brokers: [x:1]}\nflink:\n  endpoints:\n    - {name: jm, url: 'http://a:8081'}\n")
	for _, tc := range []struct {
		args []string
		env  map[string]string
		want string
	}{
		{[]string{"--config.file=/nonexistent/skewscope.yaml"}, nil, "--config.file: open /nonexistent/skewscope.yaml: no such file or directory"},
		{[]string{"--kafka.name=x"}, nil, `--kafka.name="x": needs --kafka.brokers`},
		{[]string{"--flink.name=x"}, nil, `--flink.name="x": needs --flink.url`},
		{[]string{"--flink.web-ui=https://ui.example.com/"}, nil, `--flink.web-ui="https://ui.example.com/": needs --flink.url`},
		{[]string{"--flink.url=http://b:8081", "--flink.web-ui=https://ui.example.com/#/x"}, nil, `--flink.web-ui: "https://ui.example.com/#/x": must not have a query or fragment`},
		{[]string{"--config.file=" + file, "--kafka.brokers=y:1"}, nil, `--kafka.name: kafka cluster name "default" is already used by kafka.clusters[0]`},
		{[]string{"--config.file=" + file, "--flink.url=http://b:8081", "--flink.name=jm"}, nil, `--flink.name: flink endpoint name "jm" is already used by flink.endpoints[0]`},
		{[]string{"--flink.url=ftp://b"}, nil, `--flink.url: "ftp://b": scheme must be http or https`},
		{[]string{"--flink.url=http://b:8081", "--flink.name=bad name"}, nil, `--flink.name: "bad name" must match`},
		{[]string{"--kafka.brokers=,", "--kafka.name="}, nil, "--kafka.brokers: at least one broker"},
		{[]string{"--kafka.brokers=a:1", "--kafka.name="}, nil, "--kafka.name: must not be empty"},
		{[]string{"--web.allowed-origins=https://a.example/path"}, nil, `--web.allowed-origins: "https://a.example/path": want an http or https origin`},
		{[]string{"--web.allowed-origins=chrome-extension://abc"}, nil, `scheme "chrome-extension" not allowed`},
		{[]string{"--web.external-url=ftp://x"}, nil, "--web.external-url"},
		{nil, map[string]string{"SKEWSCOPE_SANDBOX": "maybe"}, `SKEWSCOPE_SANDBOX="maybe": want true or false`},
		{[]string{"--sandbox=maybe"}, nil, "sandbox"},
	} {
		_, err := parseConfig(tc.args, envMap(tc.env), io.Discard)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("parseConfig(%q, %v) error = %v, want one containing %q", tc.args, tc.env, err, tc.want)
		}
	}
}

func TestSandbox(t *testing.T) {
	dir := t.TempDir()
	both := writeConfig(t, dir, "kafka:\n  clusters:\n    - {name: prod, brokers: [x:1]}\nflink:\n  endpoints:\n    - {name: jm, url: 'http://a:8081'}\n")
	empty := filepath.Join(dir, "empty.yaml")
	if err := os.WriteFile(empty, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		args    []string
		env     map[string]string
		want    bool
		wantErr []string
	}{
		{nil, nil, true, nil},
		{[]string{"--config.file=" + empty}, nil, true, nil},
		{[]string{"--sandbox=false"}, nil, false, nil},
		{[]string{"--sandbox"}, nil, true, nil},
		{[]string{"--kafka.brokers=a:1"}, nil, false, nil},
		{[]string{"--flink.url=http://a:8081"}, nil, false, nil},
		{nil, map[string]string{"SKEWSCOPE_KAFKA_BROKERS": "a:1"}, false, nil},
		{[]string{"--config.file=" + both}, nil, false, nil},
		{[]string{"--config.file=" + both, "--sandbox=false"}, nil, false, nil},
		{[]string{"--config.file=" + both, "--sandbox"}, nil, false,
			[]string{"--sandbox=true", `kafka cluster "prod" (kafka.clusters[0])`, `flink endpoint "jm" (flink.endpoints[0])`}},
		{[]string{"--kafka.brokers=a:1"}, map[string]string{"SKEWSCOPE_SANDBOX": "true"}, false,
			[]string{"--sandbox=true", `kafka cluster "default" (--kafka.brokers) is configured`}},
	} {
		c, err := parseConfig(tc.args, envMap(tc.env), io.Discard)
		if tc.wantErr != nil {
			for _, w := range tc.wantErr {
				if err == nil || !strings.Contains(err.Error(), w) {
					t.Errorf("parseConfig(%q, %v) error = %v, want one containing %q", tc.args, tc.env, err, w)
				}
			}
			continue
		}
		if err != nil {
			t.Errorf("parseConfig(%q, %v) error = %v", tc.args, tc.env, err)
			continue
		}
		if c.Sandbox != tc.want {
			t.Errorf("parseConfig(%q, %v).Sandbox = %v, want %v", tc.args, tc.env, c.Sandbox, tc.want)
		}
	}
}

func TestWebsocketOrigins(t *testing.T) {
	for _, tc := range []struct {
		args   []string
		listen string
		want   []string
	}{
		{nil, "127.0.0.1:8080", []string{"http://localhost:8080", "http://127.0.0.1:8080", "http://[::1]:8080"}},
		{nil, "[::]:80", []string{"http://localhost", "http://127.0.0.1", "http://[::1]"}},
		{nil, "127.0.0.1:0", nil},
		{nil, "not an address", nil},
		{[]string{"--web.external-url=HTTPS://Tools.Example.com:443/skewscope"}, "0.0.0.0:8080", []string{"https://tools.example.com"}},
		{[]string{"--web.external-url=http://tools.example.com:8080/"}, "0.0.0.0:8080", []string{"http://tools.example.com:8080"}},
		{[]string{"--web.external-url=https://tools.example.com/s", "--web.allowed-origins=https://portal.example.com,https://TOOLS.example.com"}, "0.0.0.0:8080",
			[]string{"https://tools.example.com", "https://portal.example.com"}},
		{[]string{"--web.allowed-origins=https://portal.example.com"}, "127.0.0.1:9000",
			[]string{"http://localhost:9000", "http://127.0.0.1:9000", "http://[::1]:9000", "https://portal.example.com"}},
	} {
		c, err := parseConfig(tc.args, noEnv, io.Discard)
		if err != nil {
			t.Fatalf("parseConfig(%q) error = %v", tc.args, err)
		}
		if diff := cmp.Diff(tc.want, c.websocketOrigins(tc.listen)); diff != "" {
			t.Errorf("parseConfig(%q).websocketOrigins(%q) (-want +got):\n%s", tc.args, tc.listen, diff)
		}
	}
}

// TestLogValueRedacts logs a configuration full of secrets in both log
// formats and checks that no secret appears.
func TestLogValueRedacts(t *testing.T) {
	dir := secretFiles(t)
	file := writeConfig(t, dir, `
kafka:
  clusters:
    - name: a
      brokers: [x:1]
      sasl: {mechanism: PLAIN, username: alice, password: kafka-inline-pw}
    - name: b
      brokers: [x:1]
      sasl: {mechanism: SCRAM-SHA-512, username: bob, passwordFile: $DIR/password}
    - name: c
      brokers: [x:1]
      sasl: {mechanism: OAUTHBEARER, token: kafka-static-token}
    - name: d
      brokers: [x:1]
      sasl:
        mechanism: OAUTHBEARER
        oauth: {tokenEndpoint: 'https://idp.example/token', clientId: dash, clientSecret: oauth-inline-secret}
flink:
  endpoints:
    - name: f
      url: https://a
      authorization: {bearerToken: flink-inline-token}
    - name: g
      url: https://b
      basicAuth: {username: carol, password: flink-basic-pw}
    - name: h
      url: https://c
      authorization: {bearerTokenFile: $DIR/token}
      webUI: {subtask: 'https://grafana.example.com/d/s?var-subtask={subtask}'}
`)
	c, err := parseConfig([]string{"--config.file=" + file, "--web.external-url=https://tools.example.com/s"}, noEnv, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	for _, format := range []string{"text", "json"} {
		var buf bytes.Buffer
		newLogger(appConfig{LogFormat: format, LogLevel: slog.LevelDebug}, &buf).Debug("effective configuration", "config", c)
		out := buf.String()
		for _, s := range []string{"kafka-inline-pw", "kafka-static-token", "oauth-inline-secret", "flink-inline-token", "flink-basic-pw", "s3cret-from-file", "token-from-file"} {
			if strings.Contains(out, s) {
				t.Errorf("%s log contains secret %q:\n%s", format, s, out)
			}
		}
		for _, s := range []string{"<redacted>", "<file " + filepath.Join(dir, "password") + ">", "<file " + filepath.Join(dir, "token") + ">", "alice", "carol", "tools.example.com",
			"https://c/#/job/running/{job}/overview/{vertex}/detail", "https://grafana.example.com/d/s?var-subtask={subtask}"} {
			if !strings.Contains(out, s) {
				t.Errorf("%s log lacks %q:\n%s", format, s, out)
			}
		}
	}
}

// TestExampleConfig parses examples/skewscope.yaml with its /etc/skewscope
// files created in a temporary directory.
func TestExampleConfig(t *testing.T) {
	data, err := os.ReadFile("../../examples/skewscope.yaml")
	if err != nil {
		t.Fatal(err)
	}
	dir := secretFiles(t)
	for name, from := range map[string]string{
		"kafka-ca.pem": "ca.pem", "flink-ca.pem": "ca.pem",
		"kafka-prod-eu-password": "password", "oauth-client-secret": "password",
		"flink-token": "token", "flink-basic-password": "password",
	} {
		b, err := os.ReadFile(filepath.Join(dir, from))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	file := writeConfig(t, dir, strings.ReplaceAll(string(data), "/etc/skewscope", "$DIR"))
	c, err := parseConfig([]string{"--config.file=" + file}, noEnv, io.Discard)
	if err != nil {
		t.Fatalf("example config: %v", err)
	}
	type summary struct {
		Kafka   []string
		Flink   []string
		Links   []SourceGroupLink
		Sandbox bool
	}
	got := summary{Links: c.SourceGroups, Sandbox: c.Sandbox}
	for _, k := range c.Kafka {
		got.Kafka = append(got.Kafka, k.Name+" "+k.SASL.Mechanism+" "+k.PollInterval.String())
	}
	for _, e := range c.Flink {
		got.Flink = append(got.Flink, e.Name+" -> "+e.Kafka+" "+e.PollInterval.String())
	}
	want := summary{
		Kafka: []string{"prod-eu SCRAM-SHA-512 15s", "analytics OAUTHBEARER 5s"},
		Flink: []string{"orders-enrichment -> prod-eu 10s", "analytics-session -> analytics 10s"},
		Links: []SourceGroupLink{{Endpoint: "orders-enrichment", Job: "orders-enrichment", Vertex: "Source: orders", Group: "orders-enrichment"}},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("example config (-want +got):\n%s", diff)
	}
	if deny := c.Kafka[0].Groups.Deny; len(deny) != 1 || !strings.HasPrefix(deny[0], "^(console-consumer-") {
		t.Errorf("prod-eu groups.deny = %q", deny)
	}
	if got := c.Kafka[1].TLS.KeyFile; got != filepath.Join(dir, "client-key.pem") {
		t.Errorf("analytics tls.keyFilepath = %q", got)
	}
	if c.WSMaxPerAddress != 64 || len(c.TrustedProxies) != 1 || c.TrustedProxies[0].String() != "10.0.0.0/8" {
		t.Errorf("web = %d, %v; want 64, [10.0.0.0/8]", c.WSMaxPerAddress, c.TrustedProxies)
	}
	links := []string{
		c.FlinkUI["orders-enrichment"].VertexURL("orders-enrichment", "j", "v", false),
		c.FlinkUI["orders-enrichment"].SubtaskURL("orders-enrichment", "j", "v", 3, false),
		c.FlinkUI["analytics-session"].JobURL("analytics-session", "j", true),
		c.KafkaUI["prod-eu"].TopicURL("prod-eu", "orders"),
		c.KafkaUI["analytics"].TopicURL("analytics", "clicks"),
	}
	wantLinks := []string{
		"https://flink.example.com/flink/orders-enrichment/ui/#/job/running/j/overview/v/detail",
		"https://grafana.example.com/d/flink-subtask?var-job=j&var-vertex=v&var-subtask=3",
		"http://analytics-jobmanager.flink:8081/#/job/completed/j/overview",
		"https://kafka-ui.example.com/ui/clusters/prod-eu/all-topics/orders",
		"",
	}
	if diff := cmp.Diff(wantLinks, links); diff != "" {
		t.Errorf("example config's links out (-want +got):\n%s", diff)
	}
}

// TestRelativePathsFollowTheConfigFile: relative file paths in the YAML are
// relative to the file's directory, not the working directory.
func TestRelativePathsFollowTheConfigFile(t *testing.T) {
	dir := secretFiles(t)
	file := writeConfig(t, dir, "kafka:\n  clusters:\n    - name: a\n      brokers: [x:1]\n      tls: {enabled: true, caFilepath: ca.pem}\n      sasl: {mechanism: PLAIN, username: u, passwordFile: ./password}\n")
	c, err := parseConfig([]string{"--config.file=" + file}, noEnv, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if got := c.Kafka[0].TLS.CAFile; got != filepath.Join(dir, "ca.pem") {
		t.Errorf("CAFile = %q, want %q", got, filepath.Join(dir, "ca.pem"))
	}
	if got := c.Kafka[0].SASL.PasswordFile; got != filepath.Join(dir, "password") {
		t.Errorf("PasswordFile = %q, want %q", got, filepath.Join(dir, "password"))
	}
}

func TestWarnings(t *testing.T) {
	file := writeConfig(t, t.TempDir(), "flink:\n  endpoints:\n    - {name: f, url: 'https://a', tls: {insecureSkipVerify: true}}\n    - {name: g, url: 'https://b'}\n")
	c, err := parseConfig([]string{"--config.file=" + file}, noEnv, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	w := c.warnings()
	if len(w) != 1 || !strings.Contains(w[0], `flink endpoint "f": tls.insecureSkipVerify`) {
		t.Errorf("warnings() = %q, want one about endpoint f", w)
	}
}

// TestConfigHardening: inputs that used to start skewscope broken (or not
// at all) are refused at start with the field named.
func TestConfigHardening(t *testing.T) {
	dir := t.TempDir()
	big := filepath.Join(dir, "big.yaml")
	if err := os.WriteFile(big, bytes.Repeat([]byte("# padding\n"), (maxConfigFile/10)+1), 0o600); err != nil {
		t.Fatal(err)
	}
	badName := writeConfig(t, dir, "kafka:\n  clusters:\n    - {name: 'prod eu<b>', brokers: [x:1]}\n")
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--config.file=/dev/zero"}, "--config.file: /dev/zero is a character device, not a regular file"},
		{[]string{"--config.file=" + big}, "is larger than 4 MiB"},
		{[]string{"--config.file=" + badName}, `kafka.clusters[0].name: kafka cluster name "prod eu<b>" must match ^[A-Za-z0-9._-]{1,249}$`},
		{[]string{"--kafka.brokers=x:1", "--kafka.name=prod eu<b>"}, `--kafka.name: kafka cluster name "prod eu<b>" must match`},
		{[]string{"--kafka.brokers=127.0.0.1:99999"}, `--kafka.brokers: "127.0.0.1:99999": port 99999 is not in 1..65535`},
		{[]string{"--kafka.brokers=a:1,b:0"}, `--kafka.brokers: "b:0": port 0 is not in 1..65535`},
		{[]string{"--kafka.brokers=a:http"}, `--kafka.brokers: "a:http": port "http" is not a number`},
		{[]string{"--web.route-prefix=/../x"}, `--web.route-prefix="/../x": want a clean path such as /skewscope`},
		{[]string{"--web.route-prefix=/a/./b"}, `--web.route-prefix="/a/./b"`},
		{[]string{"--web.route-prefix=/a//b"}, `--web.route-prefix="/a//b"`},
		{[]string{"--web.route-prefix=/a b"}, `--web.route-prefix="/a b"`},
		{[]string{"--web.external-url=https://x.example/a/../b"}, `--web.external-url="https://x.example/a/../b": its path`},
	} {
		_, err := parseConfig(tc.args, noEnv, io.Discard)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("parseConfig(%q) error = %v, want one containing %q", tc.args, err, tc.want)
		}
	}
	for _, ok := range [][]string{
		{"--web.route-prefix=/skewscope/"}, {"--web.route-prefix=tools/skewscope"}, {"--web.route-prefix=/"},
		{"--kafka.brokers=[::1]:9092,kafka-0.example:9093", "--kafka.name=prod-eu.1_a"},
	} {
		if _, err := parseConfig(ok, noEnv, io.Discard); err != nil {
			t.Errorf("parseConfig(%q) = %v, want no error", ok, err)
		}
	}
}

// TestWebsocketLimitSettings: --web.ws-max-per-address and
// --web.trusted-proxies, their environment variables and the file's
// web.wsMaxPerAddress and web.trustedProxies; a flag wins over the file.
func TestWebsocketLimitSettings(t *testing.T) {
	file := writeConfig(t, t.TempDir(), "web:\n  wsMaxPerAddress: 40\n  trustedProxies: [10.0.0.0/8, '192.0.2.7', '2001:db8::1/64']\n")
	type got struct {
		Max     int
		Proxies []string
	}
	for _, tc := range []struct {
		args []string
		env  map[string]string
		want got
	}{
		{nil, nil, got{Max: 128}},
		{[]string{"--web.ws-max-per-address=1000", "--web.trusted-proxies=127.0.0.1, ::1"}, nil, got{1000, []string{"127.0.0.1/32", "::1/128"}}},
		{nil, map[string]string{"SKEWSCOPE_WEB_WS_MAX_PER_ADDRESS": "7", "SKEWSCOPE_WEB_TRUSTED_PROXIES": "172.16.0.0/12"}, got{7, []string{"172.16.0.0/12"}}},
		{[]string{"--config.file=" + file}, nil, got{40, []string{"10.0.0.0/8", "192.0.2.7/32", "2001:db8::/64"}}},
		{[]string{"--config.file=" + file, "--web.ws-max-per-address=3", "--web.trusted-proxies=::ffff:10.1.0.0/112"}, nil, got{3, []string{"10.1.0.0/16"}}},
		{[]string{"--config.file=" + file}, map[string]string{"SKEWSCOPE_WEB_TRUSTED_PROXIES": "10.2.0.0/16"}, got{40, []string{"10.2.0.0/16"}}},
	} {
		c, err := parseConfig(tc.args, envMap(tc.env), io.Discard)
		if err != nil {
			t.Errorf("parseConfig(%q, %v) = %v", tc.args, tc.env, err)
			continue
		}
		g := got{Max: c.WSMaxPerAddress}
		for _, p := range c.TrustedProxies {
			g.Proxies = append(g.Proxies, p.String())
		}
		if diff := cmp.Diff(tc.want, g); diff != "" {
			t.Errorf("parseConfig(%q, %v) (-want +got):\n%s", tc.args, tc.env, diff)
		}
	}
	// The distinct live views of one address: default, file, environment,
	// flag over file.
	topicsFile := writeConfig(t, t.TempDir(), "web:\n  wsMaxTopicsPerAddress: 200\n")
	for _, tc := range []struct {
		args []string
		env  map[string]string
		want int
	}{
		{nil, nil, 64},
		{[]string{"--config.file=" + topicsFile}, nil, 200},
		{nil, map[string]string{"SKEWSCOPE_WEB_WS_MAX_TOPICS_PER_ADDRESS": "512"}, 512},
		{[]string{"--config.file=" + topicsFile, "--web.ws-max-topics-per-address=8"}, nil, 8},
	} {
		c, err := parseConfig(tc.args, envMap(tc.env), io.Discard)
		if err != nil || c.WSMaxTopicsPerAddress != tc.want {
			t.Errorf("parseConfig(%q, %v) = topics per address %d, %v; want %d", tc.args, tc.env, c.WSMaxTopicsPerAddress, err, tc.want)
		}
	}
	c, err := parseConfig([]string{"--web.trusted-proxies=0.0.0.0/0"}, noEnv, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if w := c.warnings(); len(w) != 1 || !strings.Contains(w[0], "0.0.0.0/0: every peer is trusted") {
		t.Errorf("warnings() with 0.0.0.0/0 trusted = %q, want one saying every peer is trusted", w)
	}
}

// TestWebsocketLimitErrors: bad values stop the start, each message naming
// its flag or YAML path.
func TestWebsocketLimitErrors(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		args []string
		yaml string
		want string
	}{
		{[]string{"--web.ws-max-per-address=0"}, "", `--web.ws-max-per-address="0": want a whole number from 1 to 1000`},
		{[]string{"--web.ws-max-per-address=1001"}, "", `--web.ws-max-per-address="1001": want a whole number from 1 to 1000`},
		{[]string{"--web.ws-max-per-address=-1"}, "", `--web.ws-max-per-address="-1": want a whole number`},
		{[]string{"--web.ws-max-per-address=lots"}, "", `--web.ws-max-per-address="lots": want a whole number`},
		{[]string{"--web.ws-max-per-address="}, "", `--web.ws-max-per-address="": want a whole number`},
		{[]string{"--web.trusted-proxies=10.0.0.0/33"}, "", `--web.trusted-proxies: "10.0.0.0/33": want a CIDR such as 10.0.0.0/8`},
		{[]string{"--web.trusted-proxies=10.0.0.0/8,proxy.example"}, "", `--web.trusted-proxies: "proxy.example": want a CIDR`},
		{[]string{"--web.trusted-proxies=fe80::1%eth0"}, "", `--web.trusted-proxies: "fe80::1%eth0": want a CIDR`},
		{[]string{"--web.trusted-proxies=::ffff:0:0/80"}, "", `--web.trusted-proxies: "::ffff:0:0/80": an IPv4-mapped prefix needs at least 96 bits`},
		{nil, "web:\n  wsMaxPerAddress: 0\n", "web.wsMaxPerAddress: 0: want a whole number from 1 to 1000"},
		{nil, "web:\n  trustedProxies: [10.0.0.0/8, 300.1.1.1]\n", `web.trustedProxies[1]: "300.1.1.1": want a CIDR`},
		{nil, "web:\n  wsMaxPerAddress: many\n", "line 2: cannot unmarshal !!str `many` into int"},
		{nil, "web:\n  maxSockets: 3\n", "line 2: field maxSockets not found in web (known keys: wsMaxPerAddress, wsMaxTopicsPerAddress, trustedProxies, allowedHosts"},
		{[]string{"--web.ws-max-topics-per-address=0"}, "", `--web.ws-max-topics-per-address="0": want a whole number from 1 to 512`},
		{[]string{"--web.ws-max-topics-per-address=513"}, "", `--web.ws-max-topics-per-address="513": want a whole number from 1 to 512`},
		{[]string{"--web.ws-max-topics-per-address=some"}, "", `--web.ws-max-topics-per-address="some": want a whole number`},
		{nil, "web:\n  wsMaxTopicsPerAddress: 0\n", "web.wsMaxTopicsPerAddress: 0: want a whole number from 1 to 512"},
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

// TestLinkOutConfig: an endpoint links to its Web UI at its REST URL by
// default, at webUI.base or its templates when given, and nowhere with
// webUI.enabled: false; a Kafka cluster links to a UI only when configured;
// the sandbox links nowhere.
func TestLinkOutConfig(t *testing.T) {
	file := writeConfig(t, t.TempDir(), `
kafka:
  clusters:
    - {name: prod, brokers: ['x:1'], ui: {topic: 'https://kafka-ui.example.com/ui/clusters/prod-eu/all-topics/{topic}', group: 'https://kafka-ui.example.com/ui/clusters/prod-eu/consumer-groups/{group}'}}
    - {name: bare, brokers: ['y:1']}
flink:
  endpoints:
    - {name: plain, url: 'http://jm:8081', kafka: prod}
    - {name: behind, url: 'https://flink.example.com/rest/', kafka: prod, webUI: {base: 'https://flink.example.com/ui'}}
    - name: custom
      url: http://jm2:8081
      kafka: prod
      webUI:
        job: 'https://portal.example.com/flink/{endpoint}/{job}'
        subtask: 'https://grafana.example.com/d/flink?var-job={job}&var-vertex={vertex}&var-subtask={subtask}'
    - {name: off, url: 'http://jm3:8081', kafka: prod, webUI: {enabled: false}}
`)
	c, err := parseConfig([]string{"--config.file=" + file, "--flink.url=http://quick:8081", "--flink.name=quick", "--flink.web-ui=https://quick-ui.example.com"}, noEnv, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		endpoint              string
		job, jobEnded, vertex string
		subtask               string
	}{
		{"plain", "http://jm:8081/#/job/running/J/overview", "http://jm:8081/#/job/completed/J/overview", "http://jm:8081/#/job/running/J/overview/V/detail", ""},
		{"behind", "https://flink.example.com/ui/#/job/running/J/overview", "https://flink.example.com/ui/#/job/completed/J/overview", "https://flink.example.com/ui/#/job/running/J/overview/V/detail", ""},
		{"custom", "https://portal.example.com/flink/custom/J", "https://portal.example.com/flink/custom/J", "http://jm2:8081/#/job/running/J/overview/V/detail",
			"https://grafana.example.com/d/flink?var-job=J&var-vertex=V&var-subtask=2"},
		{"quick", "https://quick-ui.example.com/#/job/running/J/overview", "https://quick-ui.example.com/#/job/completed/J/overview", "https://quick-ui.example.com/#/job/running/J/overview/V/detail", ""},
	} {
		f, ok := c.FlinkUI[tc.endpoint]
		if !ok {
			t.Errorf("FlinkUI[%q] missing", tc.endpoint)
			continue
		}
		got := []string{f.JobURL(tc.endpoint, "J", false), f.JobURL(tc.endpoint, "J", true), f.VertexURL(tc.endpoint, "J", "V", false), f.SubtaskURL(tc.endpoint, "J", "V", 2, false)}
		if diff := cmp.Diff([]string{tc.job, tc.jobEnded, tc.vertex, tc.subtask}, got); diff != "" {
			t.Errorf("FlinkUI[%q] job, ended job, vertex, subtask (-want +got):\n%s", tc.endpoint, diff)
		}
	}
	if _, ok := c.FlinkUI["off"]; ok {
		t.Errorf("FlinkUI[off] is set, want no links with webUI.enabled: false")
	}
	if got, want := c.KafkaUI["prod"].GroupURL("prod", "flink orders/1"), "https://kafka-ui.example.com/ui/clusters/prod-eu/consumer-groups/flink%20orders%2F1"; got != want {
		t.Errorf("KafkaUI[prod].GroupURL = %q, want %q", got, want)
	}
	if _, ok := c.KafkaUI["bare"]; ok {
		t.Errorf("KafkaUI[bare] is set, want none without ui")
	}

	sb, err := parseConfig(nil, noEnv, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if !sb.Sandbox || len(sb.FlinkUI) != 0 || len(sb.KafkaUI) != 0 {
		t.Errorf("sandbox: Sandbox %v, FlinkUI %v, KafkaUI %v; want true and no links (the sandbox serves no Web UI)", sb.Sandbox, sb.FlinkUI, sb.KafkaUI)
	}
}
