package collectors

import (
	"fmt"
	"strings"
)

// FieldError is one problem with one setting of a collector's
// configuration.
type FieldError struct {
	// Path is the setting's key in the configuration file relative to the
	// cluster or endpoint, e.g. "sasl.mechanism", "tls.caFilepath" or
	// "groups.allow[1]"; "" means the cluster or endpoint as a whole, for
	// a problem of several settings that Msg names.
	Path string
	Msg  string
}

// Error is "path: msg", or msg alone when the path is "".
func (e FieldError) Error() string {
	if e.Path == "" {
		return e.Msg
	}
	return e.Path + ": " + e.Msg
}

// FieldErrors are the problems a Validate method found, in the order it
// checked; errors.As finds them behind a wrapping error.
type FieldErrors []FieldError

// Add records a problem of the setting at path.
func (es *FieldErrors) Add(path, format string, args ...any) {
	*es = append(*es, FieldError{Path: path, Msg: fmt.Sprintf(format, args...)})
}

// Err is es as an error, nil when there is no problem.
func (es FieldErrors) Err() error {
	if len(es) == 0 {
		return nil
	}
	return es
}

// Error lists the problems one a line.
func (es FieldErrors) Error() string {
	lines := make([]string, len(es))
	for i, e := range es {
		lines[i] = e.Error()
	}
	return strings.Join(lines, "\n")
}
