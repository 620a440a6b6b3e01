package smallfile

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// fifo makes a named pipe in a temporary directory and holds a writer
// open on it (O_RDWR does not block), so that even an open that waits for
// a writer returns; the writer is closed when the test ends.
func fifo(t *testing.T) string {
	t.Helper()
	name := filepath.Join(t.TempDir(), "secret.fifo")
	if err := syscall.Mkfifo(name, 0o600); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	w, err := os.OpenFile(name, os.O_RDWR|syscall.O_NONBLOCK, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { w.Close() })
	return name
}

func TestReadRefuses(t *testing.T) {
	dir := t.TempDir()
	big := filepath.Join(dir, "big.pem")
	if err := os.WriteFile(big, make([]byte, 2048), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, path string
		want       string
	}{
		{"device", "/dev/zero", "/dev/zero is a character device, not a regular file"},
		{"fifo", fifo(t), "is a named pipe (FIFO), not a regular file"},
		{"directory", dir, dir + " is a directory, not a regular file"},
		{"too large", big, big + " is larger than 1 KiB"},
		{"missing", filepath.Join(dir, "nope"), "no such file"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			type result struct {
				data []byte
				err  error
			}
			res := make(chan result, 1)
			go func() {
				data, err := Read(tc.path, 1024)
				res <- result{data, err}
			}()
			var r result
			select {
			case r = <-res:
			case <-time.After(time.Minute): // a generous bound: Read must not wait for a writer
				t.Fatalf("Read(%s) still running after a minute", tc.path)
			}
			if r.err == nil || !strings.Contains(r.err.Error(), tc.want) {
				t.Errorf("Read(%s, 1024) = %d bytes, %v; want an error containing %q", tc.path, len(r.data), r.err, tc.want)
			}
		})
	}
}

func TestReadRegular(t *testing.T) {
	name := filepath.Join(t.TempDir(), "token")
	if err := os.WriteFile(name, []byte("s3cret\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	// A symlink, as Kubernetes mounts secrets, is followed.
	link := name + ".link"
	if err := os.Symlink(name, link); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{name, link} {
		data, err := Read(p, 7)
		if err != nil || string(data) != "s3cret\n" {
			t.Errorf("Read(%s, 7) = %q, %v; want the content", p, data, err)
		}
	}
	if err := Check(link); err != nil {
		t.Errorf("Check(%s) = %v, want nil", link, err)
	}
	for _, p := range []string{"/dev/zero", filepath.Dir(name)} {
		if err := Check(p); err == nil || !strings.Contains(err.Error(), "not a regular file") {
			t.Errorf("Check(%s) = %v, want not a regular file", p, err)
		}
	}
}
