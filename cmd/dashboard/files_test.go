package main

import (
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// fifoWithWriter makes a named pipe and holds a writer open on it, so that
// an open waiting for a writer cannot hang the test; reads still would.
func fifoWithWriter(t *testing.T, dir string) string {
	t.Helper()
	name := filepath.Join(dir, "pipe")
	if err := syscall.Mkfifo(name, 0o600); err != nil {
		t.Fatal(err)
	}
	w, err := os.OpenFile(name, os.O_RDWR|syscall.O_NONBLOCK, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { w.Close() })
	return name
}

// parseWithin is parseConfig, failing the test when it has not returned
// after a generous minute.
func parseWithin(t *testing.T, args []string) error {
	t.Helper()
	done := make(chan error, 1)
	go func() { _, err := parseConfig(args, noEnv, io.Discard); done <- err }()
	select {
	case err := <-done:
		return err
	case <-time.After(time.Minute):
		t.Fatalf("parseConfig(%q) still running after a minute", args)
		return nil
	}
}

// TestConfigFilesMustBeSmallRegular: the config file and every secret,
// token and PEM file it names must be a regular file within its bound; a
// device, a named pipe, a directory or a larger file is refused with the
// flag or key named, and nothing waits for a pipe's writer.
func TestConfigFilesMustBeSmallRegular(t *testing.T) {
	dir := secretFiles(t)
	big := filepath.Join(dir, "big")
	if err := os.WriteFile(big, make([]byte, 1<<20+1), 0o600); err != nil {
		t.Fatal(err)
	}
	pipe := fifoWithWriter(t, dir)
	bad := []struct{ path, want string }{
		{"/dev/zero", "/dev/zero is a character device, not a regular file"},
		{pipe, pipe + " is a named pipe (FIFO), not a regular file"},
		{dir, dir + " is a directory, not a regular file"},
		{big, big + " is larger than 1 MiB"},
	}
	for _, b := range bad[:3] {
		err := parseWithin(t, []string{"--config.file=" + b.path})
		if want := "--config.file: " + b.want; err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("--config.file=%s: error %v, want one containing %q", b.path, err, want)
		}
	}
	for _, key := range []struct{ yaml, path string }{
		{"kafka:\n  clusters:\n    - {name: k, brokers: [x:1], sasl: {mechanism: PLAIN, username: u, passwordFile: $FILE}}\n", "kafka.clusters[0].sasl.passwordFile"},
		{"kafka:\n  clusters:\n    - {name: k, brokers: [x:1], tls: {enabled: true, caFilepath: $FILE}}\n", "kafka.clusters[0].tls.caFilepath"},
		{"kafka:\n  clusters:\n    - {name: k, brokers: [x:1], tls: {enabled: true, certFilepath: $FILE, keyFilepath: $DIR/client-key.pem}}\n", "kafka.clusters[0].tls.certFilepath"},
		{"flink:\n  endpoints:\n    - {name: f, url: 'http://f/', authorization: {bearerTokenFile: $FILE}}\n", "flink.endpoints[0].authorization.bearerTokenFile"},
		{"flink:\n  endpoints:\n    - {name: f, url: 'https://f/', tls: {caFilepath: $FILE}}\n", "flink.endpoints[0].tls.caFilepath"},
	} {
		for _, b := range bad {
			file := writeConfig(t, dir, strings.ReplaceAll(key.yaml, "$FILE", b.path))
			err := parseWithin(t, []string{"--config.file=" + file})
			if want := key.path + ": " + b.want; err == nil || !strings.Contains(err.Error(), want) {
				t.Errorf("%s: %s: error %v, want one containing %q", key.path, b.path, err, want)
			} else if n := strings.Count(err.Error(), b.want); n != 1 {
				t.Errorf("%s: %s: error says it %d times, want once:\n%v", key.path, b.path, n, err)
			}
		}
	}
}
