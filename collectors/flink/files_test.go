package flink

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// badFiles returns files no secret or certificate may be read from, each
// with the words the refusal must contain: a device, a named pipe (with a
// writer held open, so that not even a blocking open can hang the test), a
// directory and a regular file above the 1 MiB bound.
func badFiles(t *testing.T) []badFile {
	t.Helper()
	dir := t.TempDir()
	big := filepath.Join(dir, "big")
	if err := os.WriteFile(big, make([]byte, 1<<20+1), 0o600); err != nil {
		t.Fatal(err)
	}
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	w, err := os.OpenFile(fifo, os.O_RDWR|syscall.O_NONBLOCK, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { w.Close() })
	return []badFile{
		{"/dev/zero", "/dev/zero is a character device, not a regular file", false},
		{fifo, fifo + " is a named pipe (FIFO), not a regular file", false},
		{dir, dir + " is a directory, not a regular file", false},
		{big, big + " is larger than 1 MiB", true},
	}
}

// badFile is a file to refuse and the words of the refusal; regular
// files pass a stat and are refused when read.
type badFile struct {
	path, want string
	regular    bool
}

// within runs f and returns its error, failing the test if f has not
// returned after a generous minute (a read that waits on a pipe).
func within(t *testing.T, f func() error) error {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- f() }()
	select {
	case err := <-done:
		return err
	case <-time.After(time.Minute):
		t.Fatal("still reading after a minute")
		return nil
	}
}

// TestSecretFilesRefused: every file the Flink client reads, at start and
// on use, is refused when it is not a small regular file, with the key
// named.
func TestSecretFilesRefused(t *testing.T) {
	for _, bf := range badFiles(t) {
		path, want := bf.path, bf.want
		reads := map[string]func() error{
			"authorization.bearerTokenFile": func() error {
				_, err := readSecretFile(path)
				if err != nil {
					err = fmt.Errorf("authorization.bearerTokenFile: %w", err)
				}
				return err
			},
			"tls.caFilepath": func() error {
				_, err := Config{Name: "f", URL: "https://f/", TLS: TLSConfig{CAFile: path}}.NewClient()
				return err
			},
			"tls.certFilepath": func() error {
				_, err := Config{Name: "f", URL: "https://f/", TLS: TLSConfig{CertFile: path, KeyFile: path}}.NewClient()
				return err
			},
		}
		for key, read := range reads {
			err := within(t, read)
			if err == nil || !strings.Contains(err.Error(), key+": ") || !strings.Contains(err.Error(), want) {
				t.Errorf("%s = %s: error %v, want one naming %s and containing %q", key, path, err, key, want)
			}
		}
		if bf.regular {
			continue // a stat accepts it; its size is checked when read
		}
		c := Config{Name: "f", URL: "https://f/", BasicAuth: &BasicAuth{Username: "u", PasswordFile: path}, TLS: TLSConfig{CAFile: path}}
		err := within(t, c.Validate)
		for _, key := range []string{"basicAuth.passwordFile", "tls.caFilepath"} {
			if err == nil || !strings.Contains(err.Error(), key+": "+want) {
				t.Errorf("Validate() with %s %s = %v, want %q", key, path, err, key+": "+want)
			}
		}
	}
}
