//go:build unix

package smallfile

import (
	"os"
	"syscall"
)

// open opens name for reading without blocking: opening a named pipe waits
// for a writer unless O_NONBLOCK is given. Reads of a regular file are not
// affected by the flag.
func open(name string) (*os.File, error) {
	return os.OpenFile(name, os.O_RDONLY|syscall.O_NONBLOCK, 0)
}
