package main

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"
)

// syncBuffer is a bytes.Buffer safe for the server goroutine and the test.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// TestRunServesAndShutsDown starts the real server on a free port, asks the
// API a question, then cancels the context as SIGTERM would and checks that
// run returns cleanly.
func TestRunServesAndShutsDown(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var stdout, stderr syncBuffer
	done := make(chan error, 1)
	go func() {
		done <- run(ctx, []string{"--listen", "127.0.0.1:0", "--log.format", "json"}, func(string) string { return "" }, &stdout, &stderr)
	}()

	addr := waitForAddress(t, &stdout, done)
	for _, path := range []string{"/healthz", "/readyz", "/api/v1/keygroup?key=orders&parallelism=4"} {
		resp, err := http.Get(addr + path)
		if err != nil {
			t.Fatalf("GET %s: %v", path, err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 {
			t.Errorf("GET %s = %d %s, want 200", path, resp.StatusCode, body)
		}
	}

	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("run returned %v after shutdown, want nil", err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("run did not return within 20s of cancellation")
	}
	if !strings.Contains(stderr.String(), `"msg":"stopped"`) {
		t.Errorf("log has no stop line in JSON format:\n%s", stderr.String())
	}
}

// runDashboard runs the dashboard in-process with args (and no environment) until
// stop, which returns run's error; it returns the base URL it serves.
func runDashboard(t *testing.T, args ...string) (base string, stop func() error) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	var stdout syncBuffer
	done := make(chan error, 1)
	go func() { done <- run(ctx, args, func(string) string { return "" }, &stdout, io.Discard) }()
	base = waitForAddress(t, &stdout, done)
	return base, func() error { cancel(); return <-done }
}

var addrRE = regexp.MustCompile(`http://[0-9.:]+/`)

func waitForAddress(t *testing.T, stdout *syncBuffer, done <-chan error) string {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		if m := addrRE.FindString(stdout.String()); m != "" {
			return strings.TrimSuffix(m, "/")
		}
		select {
		case err := <-done:
			t.Fatalf("run exited early: %v", err)
		case <-time.After(20 * time.Millisecond):
		}
	}
	t.Fatal("server did not print its address within 10s")
	return ""
}

func TestParseConfig(t *testing.T) {
	env := map[string]string{"SKEWSCOPE_LISTEN": "0.0.0.0:9999", "SKEWSCOPE_LOG_LEVEL": "debug"}
	getenv := func(k string) string { return env[k] }

	cfg, err := parseConfig(nil, getenv, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Listen != "0.0.0.0:9999" || cfg.LogLevel.String() != "DEBUG" || cfg.LogFormat != "text" {
		t.Errorf("parseConfig(env) = %+v, want listen from env, debug, text", cfg)
	}
	cfg, err = parseConfig([]string{"--listen=127.0.0.1:1234"}, getenv, io.Discard)
	if err != nil || cfg.Listen != "127.0.0.1:1234" {
		t.Errorf("flag should win over env: got %+v, %v", cfg, err)
	}

	for _, tc := range []struct {
		args    []string
		env     map[string]string
		mention string
	}{
		{[]string{"--log.format=xml"}, nil, "log.format"},
		{[]string{"--log.level=loud"}, nil, "log.level"},
		{nil, map[string]string{"SKEWSCOPE_LOG_FORMAT": "yaml"}, "log.format"},
		{[]string{"--listen="}, nil, "listen"},
		{[]string{"--nope"}, nil, "nope"},
		{[]string{"extra"}, nil, "extra"},
	} {
		_, err := parseConfig(tc.args, func(k string) string { return tc.env[k] }, io.Discard)
		if err == nil || !strings.Contains(err.Error(), tc.mention) {
			t.Errorf("parseConfig(%q, %v) error = %v, want one mentioning %q", tc.args, tc.env, err, tc.mention)
		}
	}
}

func TestRunRejectsBusyPort(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var out1 syncBuffer
	done := make(chan error, 1)
	go func() {
		done <- run(ctx, []string{"--listen", "127.0.0.1:0"}, func(string) string { return "" }, &out1, io.Discard)
	}()
	addr := strings.TrimPrefix(waitForAddress(t, &out1, done), "http://")
	err := run(ctx, []string{"--listen", addr}, func(string) string { return "" }, io.Discard, io.Discard)
	if err == nil || !strings.Contains(err.Error(), addr) {
		t.Errorf("second run on %s = %v, want a listen error naming the address", addr, err)
	}
}
