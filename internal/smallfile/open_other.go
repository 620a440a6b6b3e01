//go:build !unix

package smallfile

import "os"

// open checks name before opening it, for systems without O_NONBLOCK.
func open(name string) (*os.File, error) {
	if err := Check(name); err != nil {
		return nil, err
	}
	return os.Open(name)
}
