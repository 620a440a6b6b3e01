package web

import (
	"log/slog"
	"net/http"
	"runtime/debug"
	"strconv"
	"time"

	"github.com/go-chi/chi/v5/middleware"
)

// securityHeaders sets the headers every response carries. Pages replace
// the Content-Security-Policy with a nonce-based one of their own; API
// responses are never meant to be rendered, so they get the strictest.
func securityHeaders(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("Referrer-Policy", "same-origin")
		h.Set("Content-Security-Policy", "default-src 'none'; frame-ancestors 'none'")
		next.ServeHTTP(w, r)
	})
}

// logRequests logs one line per request at debug level, and at warn level
// for 5xx answers.
func (s *Server) logRequests(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		ww := middleware.NewWrapResponseWriter(w, r.ProtoMajor)
		next.ServeHTTP(ww, r)
		level := slog.LevelDebug
		if ww.Status() >= 500 {
			level = slog.LevelWarn
		}
		s.log.Log(r.Context(), level, "request",
			"method", r.Method, "path", r.URL.Path, "status", ww.Status(),
			"bytes", ww.BytesWritten(), "duration", time.Since(start),
			"request_id", middleware.GetReqID(r.Context()))
	})
}

// recoverer turns a panic in a handler into a logged 500 instead of a
// dropped connection. Panics are bugs: the stack goes to the log.
func (s *Server) recoverer(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		defer func() {
			if v := recover(); v != nil {
				if v == http.ErrAbortHandler {
					panic(v)
				}
				s.log.ErrorContext(r.Context(), "panic serving request", "path", r.URL.Path, "error", v, "stack", string(debug.Stack()))
				writeJSON(w, http.StatusInternalServerError, apiErrorBody{Error: "internal error"})
			}
		}()
		next.ServeHTTP(w, r)
	})
}

const (
	// defaultHeavyRenders is how many expensive requests (planner, key
	// lookup, assignment) may run at once. Each may allocate tens of MB.
	defaultHeavyRenders = 4
	// heavyQueueWait is how long such a request waits for a free slot
	// before it is answered 503.
	heavyQueueWait = 2 * time.Second
	// heavyRetryAfter is the Retry-After of that 503, in seconds.
	heavyRetryAfter = 2
)

// limitHeavy lets at most cap(s.heavy) expensive requests run at once: a
// request waits up to heavyQueueWait for a slot, then is answered 503 with
// Retry-After (JSON when asJSON), so that many slow clients cannot make
// the server hold many large pages in memory at the same time.
func (s *Server) limitHeavy(asJSON bool, next http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		select {
		case s.heavy <- struct{}{}:
		default:
			t := time.NewTimer(heavyQueueWait)
			select {
			case s.heavy <- struct{}{}:
				t.Stop()
			case <-t.C:
				s.busy(w, asJSON)
				return
			case <-r.Context().Done():
				t.Stop()
				return
			}
		}
		defer func() { <-s.heavy }()
		next(w, r)
	}
}

func (s *Server) busy(w http.ResponseWriter, asJSON bool) {
	const msg = "server busy: too many large plans or lookups are being computed; retry in a few seconds"
	w.Header().Set("Retry-After", strconv.Itoa(heavyRetryAfter))
	if asJSON {
		writeJSON(w, http.StatusServiceUnavailable, apiErrorBody{Error: msg})
		return
	}
	http.Error(w, msg, http.StatusServiceUnavailable)
}
