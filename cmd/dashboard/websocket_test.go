package main

import (
	"net/http"
	"strings"
	"testing"

	"github.com/gorilla/websocket"
)

// TestRunWebsocketLimitBehindProxy: the dashboard started with a
// per-address bound of 2 and loopback as its trusted proxy counts the
// sockets a proxy on loopback opens by the client its X-Forwarded-For
// names.
func TestRunWebsocketLimitBehindProxy(t *testing.T) {
	base, stop := runDashboard(t, "--listen", "127.0.0.1:0", "--sandbox=false", "--web.ws-max-per-address=2", "--web.trusted-proxies=127.0.0.1")
	dial := func(client string) int {
		t.Helper()
		h := http.Header{"Origin": {base}, "X-Forwarded-For": {client}}
		c, resp, err := websocket.DefaultDialer.Dial("ws"+strings.TrimPrefix(base, "http")+"/ws", h)
		if err != nil {
			if resp == nil {
				t.Fatalf("dial as %s: %v", client, err)
			}
			return resp.StatusCode
		}
		t.Cleanup(func() { c.Close() })
		return http.StatusSwitchingProtocols
	}
	for i, tc := range []struct {
		client string
		want   int
	}{
		{"198.51.100.1", 101}, {"198.51.100.1", 101}, {"198.51.100.1", 429},
		{"198.51.100.2", 101}, {"203.0.113.9, 198.51.100.2", 101}, {"198.51.100.2", 429},
	} {
		if got := dial(tc.client); got != tc.want {
			t.Errorf("socket %d through the proxy for %q = %d, want %d", i+1, tc.client, got, tc.want)
		}
	}
	if err := stop(); err != nil {
		t.Errorf("run() = %v after cancel, want nil", err)
	}
}
