// Package smallfiletest gives the tests of every package that reads files
// through smallfile the files it must refuse, and a guard against a read
// that hangs.
package smallfiletest

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// BadFile is a file to refuse and the words of the refusal; regular files
// pass a stat and are refused when read.
type BadFile struct {
	Path, Want string
	Regular    bool
}

// BadFiles returns files no secret, certificate or config may be read
// from, each with the words the refusal must contain: a device, a named
// pipe (with a writer held open, so that not even a blocking open can hang
// the test), a directory and a regular file above the 1 MiB bound.
func BadFiles(t *testing.T) []BadFile {
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
	return []BadFile{
		{"/dev/zero", "/dev/zero is a character device, not a regular file", false},
		{fifo, fifo + " is a named pipe (FIFO), not a regular file", false},
		{dir, dir + " is a directory, not a regular file", false},
		{big, big + " is larger than 1 MiB", true},
	}
}

// Within runs f and returns its error, failing the test if f has not
// returned after a generous minute (a read that waits on a pipe).
func Within(t *testing.T, f func() error) error {
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
