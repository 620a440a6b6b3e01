package kafka

import (
	"context"
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

// TestSecretFilesRefused: every file the Kafka collector reads on use is
// refused when it is not a small regular file, with the key named.
func TestSecretFilesRefused(t *testing.T) {
	for _, bf := range badFiles(t) {
		path, want := bf.path, bf.want
		reads := map[string]func() error{
			"sasl.passwordFile": func() error {
				_, err := SASLConfig{Mechanism: SASLPlain, Username: "u", PasswordFile: path}.password()
				return err
			},
			"sasl.tokenFile": func() error { _, err := readToken(path); return err },
			"sasl.oauth.clientSecretFile": func() error {
				// The secret is read before the (unreachable) endpoint is asked.
				ts := newTokenSource(OAuthConfig{TokenEndpoint: "http://127.0.0.1:1/token", ClientID: "c", ClientSecretFile: path})
				_, err := ts.Token(context.Background())
				return err
			},
			"tls.caFilepath": func() error { _, err := TLSConfig{Enabled: true, CAFile: path}.load(); return err },
			"tls.certFilepath": func() error {
				_, err := TLSConfig{Enabled: true, CertFile: path, KeyFile: path}.load()
				return err
			},
		}
		for key, read := range reads {
			err := within(t, read)
			if err == nil || !strings.Contains(err.Error(), key+": ") || !strings.Contains(err.Error(), want) {
				t.Errorf("%s = %s: error %v, want one naming %s and containing %q", key, path, err, key, want)
			}
		}
		c := Config{Name: "c", Brokers: []string{"k:9092"}, TLS: TLSConfig{Enabled: true, CAFile: path}}
		if err := c.Validate(); !bf.regular && (err == nil || !strings.Contains(err.Error(), "tls.caFilepath: "+want)) {
			t.Errorf("Validate() with tls.caFilepath %s = %v, want %q", path, err, want)
		}
	}
}
