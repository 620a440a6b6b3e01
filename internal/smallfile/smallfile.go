// Package smallfile reads the small files skewscope is pointed at: its
// configuration file, secrets, tokens, certificates and keys. Each is a
// regular file of a few kilobytes; a device (/dev/zero), a named pipe or a
// directory named by mistake must give a message at once, neither a read
// that grows memory until the process is killed nor an open that waits
// forever for a writer.
package smallfile

import (
	"crypto/tls"
	"fmt"
	"io"
	"io/fs"
	"os"
)

// Bounds for Read.
const (
	// SecretLimit bounds a secret, token, certificate or key file; a PEM
	// bundle of a few hundred CA certificates is far below it.
	SecretLimit = 1 << 20
	// ConfigLimit bounds the configuration file.
	ConfigLimit = 4 << 20
)

// Read returns the content of the regular file name, of at most limit
// bytes. A file that is not regular (a named pipe, a device, a directory, a
// socket) or is larger than limit is refused with an error naming the file
// and the reason; the caller prefixes the setting that named it. It never
// waits for a writer of a named pipe, and reads at most limit+1 bytes.
func Read(name string, limit int64) ([]byte, error) {
	f, err := open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if err := regular(name, fi); err != nil {
		return nil, err
	}
	data, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(data)) > limit {
		return nil, fmt.Errorf("%s is larger than %s, the most skewscope reads for this setting: is it the right file?", name, size(limit))
	}
	return data, nil
}

// Check reports, without opening it, whether name is a regular file that
// Read may read: for validation, where the content is read later.
func Check(name string) error {
	fi, err := os.Stat(name)
	if err != nil {
		return err
	}
	return regular(name, fi)
}

// X509KeyPair loads a certificate and its key like tls.LoadX509KeyPair,
// each file read with Read and SecretLimit. The error names the file.
func X509KeyPair(certFile, keyFile string) (tls.Certificate, error) {
	cert, err := Read(certFile, SecretLimit)
	if err != nil {
		return tls.Certificate{}, err
	}
	key, err := Read(keyFile, SecretLimit)
	if err != nil {
		return tls.Certificate{}, err
	}
	return tls.X509KeyPair(cert, key)
}

// regular refuses anything but a regular file, naming what it is.
func regular(name string, fi fs.FileInfo) error {
	m := fi.Mode()
	if m.IsRegular() {
		return nil
	}
	kind := "not a regular file"
	switch {
	case m.IsDir():
		kind = "a directory"
	case m&fs.ModeNamedPipe != 0:
		kind = "a named pipe (FIFO)"
	case m&fs.ModeCharDevice != 0:
		kind = "a character device"
	case m&fs.ModeDevice != 0:
		kind = "a block device"
	case m&fs.ModeSocket != 0:
		kind = "a socket"
	}
	if kind != "not a regular file" {
		kind += ", not a regular file"
	}
	return fmt.Errorf("%s is %s: give the path of the file itself", name, kind)
}

// size writes a bound in MiB or KiB.
func size(n int64) string {
	if n >= 1<<20 && n%(1<<20) == 0 {
		return fmt.Sprintf("%d MiB", n>>20)
	}
	if n >= 1<<10 && n%(1<<10) == 0 {
		return fmt.Sprintf("%d KiB", n>>10)
	}
	return fmt.Sprintf("%d bytes", n)
}
