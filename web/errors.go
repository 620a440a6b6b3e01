package web

import (
	"errors"
	"fmt"
	"net/http"
)

// inputError is bad input from the client. Its message names the field and
// what would have been accepted; it becomes a 400 (or Status, when set).
type inputError struct {
	Status int
	Field  string
	Msg    string
}

func (e *inputError) Error() string {
	if e.Field == "" {
		return e.Msg
	}
	return e.Field + ": " + e.Msg
}

func badInput(field, format string, args ...any) error {
	return &inputError{Status: http.StatusBadRequest, Field: field, Msg: fmt.Sprintf(format, args...)}
}

// statusOf returns the HTTP status for an error returned by a handler and
// whether the error is the client's (safe to show verbatim).
func statusOf(err error) (int, bool) {
	var ie *inputError
	if errors.As(err, &ie) {
		if ie.Status != 0 {
			return ie.Status, true
		}
		return http.StatusBadRequest, true
	}
	var mbe *http.MaxBytesError
	if errors.As(err, &mbe) {
		return http.StatusRequestEntityTooLarge, true
	}
	return http.StatusInternalServerError, false
}
