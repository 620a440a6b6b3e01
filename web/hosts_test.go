package web

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/gorilla/websocket"
)

// TestHostPolicyRefusesRebinding: a page of another site whose name points
// at skewscope's address sends its own name as Host and as Origin. Such a
// request is answered 421 on every route (pages, form posts, the API, the
// websocket handshake), under the route prefix and outside it; allowed
// hosts, IP addresses on a wildcard listener and the health endpoints pass.
func TestHostPolicyRefusesRebinding(t *testing.T) {
	const external = "https://skewscope.example.com"
	for _, prefix := range []string{"", "/skewscope"} {
		t.Run("prefix="+prefix, func(t *testing.T) {
			sb := &countingSandbox{}
			s, err := NewServer(Options{
				RoutePrefix: prefix, Sandbox: sb,
				WebSocket: HubOptions{AllowedOrigins: []string{external}},
				Hosts:     HostPolicy{Allowed: []string{"skewscope.example.com", "*.tools.example.org", "localhost", "127.0.0.1", "::1"}},
			})
			if err != nil {
				t.Fatal(err)
			}
			restore := url.Values{"job": {"orders"}, "parallelism": {"6"}}.Encode()
			sample := url.Values{"seconds": {"5"}}.Encode()
			type req struct{ method, path, body string }
			routes := []req{
				{"GET", "/", ""},
				{"GET", "/plan?topic=orders:12&parallelism=4", ""},
				{"POST", "/kafka/prod/topics/orders/sample", sample},
				{"POST", "/api/v1/kafka/prod/topics/orders/samples", sample},
				{"POST", "/sandbox/restore", restore},
				{"GET", "/metrics", ""},
				{"GET", "/api/v1/version", ""},
			}
			serve := func(host string, rq req) *httptest.ResponseRecorder {
				r := httptest.NewRequest(rq.method, prefix+rq.path, strings.NewReader(rq.body))
				r.URL.Scheme, r.URL.Host = "", "" // go.dev/issue/73151
				r.Host = host
				r.Header.Set("Origin", "http://"+host)
				r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
				w := httptest.NewRecorder()
				s.ServeHTTP(w, r)
				return w
			}
			for _, host := range []string{"rebind.evil.example", "rebind.evil.example:8080", "REBIND.EVIL.EXAMPLE", "skewscope.example.com.evil.example", "tools.example.org", "10.0.0.5:8080", "[2001:db8::1]:8080", ""} {
				for _, rq := range routes {
					w := serve(host, rq)
					if w.Code != http.StatusMisdirectedRequest {
						t.Errorf("%s %s with Host %q = %d, want 421", rq.method, rq.path, host, w.Code)
					} else if body := errorText(w); !strings.Contains(body, "--web.allowed-hosts") || !strings.Contains(body, `host "`+requestHost(host)+`"`) {
						t.Errorf("%s %s with Host %q: body %q, want it to name the host and --web.allowed-hosts", rq.method, rq.path, host, body)
					}
				}
			}
			if w := serve("rebind.evil.example", req{"GET", "/api/v1/version", ""}); !strings.HasPrefix(w.Header().Get("Content-Type"), "application/json") || !strings.Contains(w.Body.String(), `{"error":"misdirected request`) {
				t.Errorf("GET /api/v1/version with a rebinding Host: %s %q, want a JSON error like the API's others", w.Header().Get("Content-Type"), w.Body)
			}
			if sb.calls != 0 {
				t.Errorf("sandbox restored %d times by refused requests, want 0", sb.calls)
			}
			if w := serve("rebind.evil.example", req{"GET", "/", ""}); prefix != "" && w.Code != http.StatusMisdirectedRequest {
				t.Errorf("GET / (the prefix redirect) with a rebinding Host = %d, want 421", w.Code)
			}
			for _, host := range []string{"skewscope.example.com", "SkewScope.Example.COM:443", "skewscope.example.com.", "a.tools.example.org", "b.a.tools.example.org:8443", "localhost:8080", "127.0.0.1:9", "[::1]:8080"} {
				if w := serve(host, req{"GET", "/", ""}); w.Code != http.StatusOK {
					t.Errorf("GET / with Host %q = %d, want 200: %.200s", host, w.Code, w.Body)
				}
				if w := serve(host, req{"POST", "/sandbox/restore", restore}); w.Code != http.StatusSeeOther {
					t.Errorf("POST /sandbox/restore with Host %q = %d, want 303: %.200s", host, w.Code, w.Body)
				}
				if w := serve(host, req{"POST", "/kafka/prod/topics/orders/sample", sample}); w.Code == http.StatusMisdirectedRequest {
					t.Errorf("POST sample form with Host %q = 421, want it through to the route", host)
				}
			}
			for _, path := range []string{"/healthz", "/readyz", "/-/healthy", "/-/ready"} {
				w := serve("10.0.0.5:8080", req{"GET", path, ""})
				if w.Code == http.StatusMisdirectedRequest {
					t.Errorf("GET %s with a pod-IP Host = 421, want the health answer", path)
				}
			}
		})
	}
}

// errorText is the message of an error answer: the JSON error of an API
// answer, else the body.
func errorText(w *httptest.ResponseRecorder) string {
	var e apiErrorBody
	if strings.HasPrefix(w.Header().Get("Content-Type"), "application/json") && json.Unmarshal(w.Body.Bytes(), &e) == nil {
		return e.Error
	}
	return w.Body.String()
}

// TestHostPolicyWebsocket: the websocket handshake of a rebinding page is
// refused with 421 before the upgrade; an allowed host opens it.
func TestHostPolicyWebsocket(t *testing.T) {
	s, err := NewServer(Options{
		WebSocket: HubOptions{AllowedOrigins: []string{"http://skewscope.example.com", "http://rebind.evil.example"}},
		Hosts:     HostPolicy{Allowed: []string{"skewscope.example.com"}},
	})
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(s)
	defer ts.Close()
	wsURL := "ws" + strings.TrimPrefix(ts.URL, "http") + "/ws"
	for _, tc := range []struct {
		host string
		want int
	}{
		// The Origin is even in the websocket allow-list: only the Host
		// check stops it.
		{"rebind.evil.example", http.StatusMisdirectedRequest},
		{"skewscope.example.com", http.StatusSwitchingProtocols},
	} {
		h := http.Header{"Host": {tc.host}, "Origin": {"http://" + tc.host}}
		c, resp, err := websocket.DefaultDialer.Dial(wsURL, h)
		got := 0
		if resp != nil {
			got = resp.StatusCode
		}
		if c != nil {
			c.Close()
		}
		if got != tc.want {
			t.Errorf("websocket handshake with Host %q = %d (%v), want %d", tc.host, got, err, tc.want)
		}
	}
}

// TestHostPolicyAnyIP: on a wildcard listener every IP-address Host passes
// (probes and scrapes by pod IP), and names still need to be listed.
func TestHostPolicyAnyIP(t *testing.T) {
	m, err := newHostMatcher(HostPolicy{AnyIP: true, Allowed: []string{"localhost"}}, "")
	if err != nil {
		t.Fatal(err)
	}
	for host, want := range map[string]bool{
		"10.1.2.3:8080": true, "[fd00::5]:8080": true, "[::ffff:10.0.0.1]": true, "192.0.2.1": true,
		"localhost:1": true, "rebind.evil.example": false, "10.1.2.3.nip.io": false, "[fe80::1%25eth0]": false,
	} {
		if got := m.allows(host); got != want {
			t.Errorf("allows(%q) = %v, want %v", host, got, want)
		}
	}
	if all, _ := newHostMatcher(HostPolicy{Allowed: []string{"*"}}, ""); !all.allows("anything.example") {
		t.Errorf(`allows with "*" = false, want true`)
	}
}

func TestNormalizeHost(t *testing.T) {
	for in, want := range map[string]string{
		"Skewscope.Example.com.": "skewscope.example.com", "*.Example.com": "*.example.com", "[::1]": "::1",
		"::FFFF:10.0.0.1": "10.0.0.1", "10.0.0.5": "10.0.0.5", "*": "*", "kafka_ui.internal": "kafka_ui.internal",
	} {
		if got, err := NormalizeHost(in); got != want || err != nil {
			t.Errorf("NormalizeHost(%q) = %q, %v; want %q, nil", in, got, err, want)
		}
	}
	for _, in := range []string{"", "example.com:8080", "https://example.com", "example.com/x", "*.", "a.*.example.com", "exa mple.com", "[10.0.0.1]", "-x.example.com", "fe80::1%eth0"} {
		if got, err := NormalizeHost(in); err == nil || !strings.Contains(err.Error(), "want a host name or IP address") {
			t.Errorf("NormalizeHost(%q) = %q, %v; want an error saying what a host looks like", in, got, err)
		}
	}
}
