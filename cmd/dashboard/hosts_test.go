package main

import (
	"io"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/gorilla/websocket"

	"github.com/skewscope/skewscope/web"
)

// TestHostPolicyDefaults: the Host headers answered are the loopback
// names, the external URL's host, the listen host and --web.allowed-hosts
// (flag, environment or file, the flag replacing the file's list); a
// wildcard listen address lets IP addresses through but trusts no name.
func TestHostPolicyDefaults(t *testing.T) {
	file := writeConfig(t, t.TempDir(), "web:\n  allowedHosts: [Dash.Example.com, '*.apps.example.org']\n")
	for _, tc := range []struct {
		name string
		args []string
		env  map[string]string
		want web.HostPolicy
	}{
		{"loopback listen", []string{"--listen=127.0.0.1:8080"}, nil,
			web.HostPolicy{Allowed: []string{"localhost", "127.0.0.1", "::1"}}},
		{"external url", []string{"--listen=127.0.0.1:8080", "--web.external-url=https://Tools.Example.com:8443/skewscope"}, nil,
			web.HostPolicy{Allowed: []string{"localhost", "127.0.0.1", "::1", "tools.example.com"}}},
		{"wildcard listen", []string{"--listen=0.0.0.0:8080"}, nil,
			web.HostPolicy{Allowed: []string{"localhost", "127.0.0.1", "::1"}, AnyIP: true}},
		{"no listen host", []string{"--listen=:8080"}, nil,
			web.HostPolicy{Allowed: []string{"localhost", "127.0.0.1", "::1"}, AnyIP: true}},
		{"ipv6 wildcard", []string{"--listen=[::]:8080"}, nil,
			web.HostPolicy{Allowed: []string{"localhost", "127.0.0.1", "::1"}, AnyIP: true}},
		{"listen on one address", []string{"--listen=10.1.2.3:8080"}, nil,
			web.HostPolicy{Allowed: []string{"localhost", "127.0.0.1", "::1", "10.1.2.3"}}},
		{"listen on a name", []string{"--listen=dash.internal:8080"}, nil,
			web.HostPolicy{Allowed: []string{"localhost", "127.0.0.1", "::1", "dash.internal"}}},
		{"flag", []string{"--web.allowed-hosts=a.example.com, *.B.example.com,[fd00::1]"}, nil,
			web.HostPolicy{Allowed: []string{"localhost", "127.0.0.1", "::1", "a.example.com", "*.b.example.com", "fd00::1"}}},
		{"env", nil, map[string]string{"SKEWSCOPE_WEB_ALLOWED_HOSTS": "env.example.com"},
			web.HostPolicy{Allowed: []string{"localhost", "127.0.0.1", "::1", "env.example.com"}}},
		{"file", []string{"--config.file=" + file}, nil,
			web.HostPolicy{Allowed: []string{"localhost", "127.0.0.1", "::1", "dash.example.com", "*.apps.example.org"}}},
		{"flag replaces file", []string{"--config.file=" + file, "--web.allowed-hosts=flag.example.com"}, nil,
			web.HostPolicy{Allowed: []string{"localhost", "127.0.0.1", "::1", "flag.example.com"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := parseConfig(tc.args, envMap(tc.env), io.Discard)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, c.hostPolicy()); diff != "" {
				t.Errorf("hostPolicy() (-want +got):\n%s", diff)
			}
		})
	}
	c, err := parseConfig([]string{"--web.allowed-hosts=*"}, noEnv, io.Discard)
	if err != nil || !slices.ContainsFunc(c.warnings(), func(w string) bool { return strings.Contains(w, "allowed hosts include *") }) {
		t.Errorf("--web.allowed-hosts=*: warnings %q, %v; want one saying the Host is not checked", c.warnings(), err)
	}
}

// TestHostAndExternalURLErrors: bad allowed hosts and an external URL with
// user info, a query or a fragment are refused, naming the setting and not
// repeating a password.
func TestHostAndExternalURLErrors(t *testing.T) {
	file := writeConfig(t, t.TempDir(), "web:\n  allowedHosts: ['x.example.com:8080']\n")
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--web.allowed-hosts=https://x.example.com"}, "--web.allowed-hosts: a port or scheme"},
		{[]string{"--web.allowed-hosts=x.example.com:8080"}, "--web.allowed-hosts: a port or scheme"},
		{[]string{"--web.allowed-hosts=a b"}, `--web.allowed-hosts: "a b": want a host name or IP address`},
		{[]string{"--config.file=" + file}, "web.allowedHosts[0]: a port or scheme"},
		{[]string{"--web.external-url=https://user:hunter2@tools.example.com/"}, `--web.external-url="https://user:xxxxx@tools.example.com/": must not contain user info`},
		{[]string{"--web.external-url=https://user@tools.example.com/"}, "must not contain user info"},
		{[]string{"--web.external-url=https://tools.example.com/s?x=1"}, "--web.external-url=\"https://tools.example.com/s?x=1\": must not have a query or fragment"},
		{[]string{"--web.external-url=https://tools.example.com/s?"}, "must not have a query or fragment"},
		{[]string{"--web.external-url=https://tools.example.com/s#top"}, "must not have a query or fragment"},
		{[]string{"--web.external-url=https://tools.example.com/s#"}, "must not have a query or fragment"},
		{[]string{"--web.external-url=https://u:hunter2@x/%zz"}, "--web.external-url: not a URL"},
	} {
		_, err := parseConfig(tc.args, noEnv, io.Discard)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("parseConfig(%q) error = %v, want one containing %q", tc.args, err, tc.want)
		} else if strings.Contains(err.Error(), "hunter2") {
			t.Errorf("parseConfig(%q) error repeats the password: %v", tc.args, err)
		}
	}
}

// TestRunRefusesRebindingHost: the dashboard started with an external URL
// answers 421 to a request naming another host (a DNS-rebinding page: Host
// and Origin both its own) on pages, form posts and the websocket, and
// answers its own and the loopback names; the health endpoints answer any
// Host.
func TestRunRefusesRebindingHost(t *testing.T) {
	base, stop := runDashboard(t, "--listen", "127.0.0.1:0", "--web.external-url=https://skewscope.example.com/")
	do := func(method, path, host string, form url.Values) int {
		t.Helper()
		req, err := http.NewRequest(method, base+path, strings.NewReader(form.Encode()))
		if err != nil {
			t.Fatal(err)
		}
		req.Host = host
		req.Header.Set("Origin", "http://"+host)
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatalf("%s %s: %v", method, path, err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return resp.StatusCode
	}
	restore := url.Values{"job": {"orders-enrichment"}, "parallelism": {"6"}}
	for _, tc := range []struct {
		method, path string
		form         url.Values
	}{
		{"GET", "/", nil},
		{"POST", "/kafka/sandbox/topics/orders/sample", url.Values{"seconds": {"5"}}},
		{"POST", "/api/v1/kafka/sandbox/topics/orders/samples", url.Values{"seconds": {"5"}}},
		{"POST", "/sandbox/restore", restore},
		{"GET", "/metrics", nil},
	} {
		if got := do(tc.method, tc.path, "rebind.evil.example", tc.form); got != http.StatusMisdirectedRequest {
			t.Errorf("%s %s with Host rebind.evil.example = %d, want 421", tc.method, tc.path, got)
		}
	}
	for _, host := range []string{"skewscope.example.com", strings.TrimPrefix(base, "http://"), "localhost:1234"} {
		if got := do("GET", "/", host, nil); got != http.StatusOK {
			t.Errorf("GET / with Host %s = %d, want 200", host, got)
		}
	}
	if got := do("GET", "/healthz", "10.0.0.5:8080", nil); got != http.StatusOK {
		t.Errorf("GET /healthz with a pod-IP Host = %d, want 200", got)
	}
	ws := "ws" + strings.TrimPrefix(base, "http") + "/ws"
	_, resp, err := websocket.DefaultDialer.Dial(ws, http.Header{"Host": {"rebind.evil.example"}, "Origin": {"http://rebind.evil.example"}})
	if err == nil || resp == nil || resp.StatusCode != http.StatusMisdirectedRequest {
		code := 0
		if resp != nil {
			code = resp.StatusCode
		}
		t.Errorf("websocket with Host rebind.evil.example = %d, %v; want 421", code, err)
	}
	if err := stop(); err != nil {
		t.Errorf("run() = %v after cancel, want nil", err)
	}
}
