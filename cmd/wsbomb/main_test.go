package main

import (
	"context"
	"net/http/httptest"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/skewscope/skewscope/web"
)

// TestBombIsClosedByTheHub runs wsbomb against a server built as the
// dashboard builds its web server: every socket's inflated message is
// refused and the socket closed, and the figures are printed.
func TestBombIsClosedByTheHub(t *testing.T) {
	srv := httptest.NewUnstartedServer(nil)
	origin := "http://" + srv.Listener.Addr().String()
	s, err := web.NewServer(web.Options{WebSocket: web.HubOptions{AllowedOrigins: []string{origin}, EnableCompression: true}})
	if err != nil {
		t.Fatal(err)
	}
	srv.Config.Handler = s
	srv.Start()
	defer srv.Close()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { s.Run(ctx); close(done) }()
	defer func() { cancel(); <-done }()

	var out strings.Builder
	if err := run([]string{"-addr", srv.Listener.Addr().String(), "-pid", strconv.Itoa(os.Getpid()), "-sockets", "4", "-inflate", "1048576"}, &out); err != nil {
		t.Fatal(err)
	}
	t.Log(out.String())
	if !strings.Contains(out.String(), "4 sockets opened, 4 closed by the server") || !strings.Contains(out.String(), "dashboard RSS: before ") {
		t.Errorf("wsbomb printed %q, want 4 sockets opened and closed and the RSS figures", out.String())
	}
	if err := run([]string{"-addr", "192.0.2.1:80", "-pid", "1"}, &out); err == nil || !strings.Contains(err.Error(), "loopback") {
		t.Errorf("a non-loopback -addr = %v, want it refused", err)
	}
}
