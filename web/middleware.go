package web

import (
	"bytes"
	"fmt"
	"log/slog"
	"net/http"
	"runtime/debug"
	"strconv"
	"time"

	"github.com/go-chi/chi/v5/middleware"

	"github.com/skewscope/skewscope/internal/format"
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
	// lookup, assignment) may be computed at once. Each may allocate tens
	// of MB.
	defaultHeavyRenders = 4
	// heavyQueueWait is how long such a request waits for a free slot
	// before it is answered 503.
	heavyQueueWait = 2 * time.Second
	// heavyRetryAfter is the Retry-After of that 503, in seconds.
	heavyRetryAfter = 2
	// defaultMaxAnswer bounds the answer of one expensive request: the
	// largest plan the planner takes (50,000 partitions of a 249-character
	// topic, parallelism + target 8,191) answers 6 MB of JSON and 3 MB of
	// HTML; partitions of many topics with long names can pass it.
	defaultMaxAnswer = 16 << 20
	// heavyWriteWait bounds the writing of an expensive request's answer,
	// as the server's write timeout bounds a whole request; a client that
	// reads slower is cut off, and holds no render slot meanwhile.
	heavyWriteWait = 60 * time.Second
	// defaultAnswerBudget bounds the bytes of rendered answers held while
	// they are written, all requests together: a slot bounds computing,
	// this bounds the memory slow readers make the server keep (eight
	// answers of the largest size).
	defaultAnswerBudget = 8 * defaultMaxAnswer
)

// limitHeavy lets at most cap(s.heavy) expensive requests be computed at
// once: a request waits up to heavyQueueWait for a slot, then is answered
// 503 with Retry-After (JSON when asJSON), so that many clients cannot
// make the server compute many large pages at the same time. The slot
// bounds the computation only: the answer is rendered into a buffer of at
// most s.maxAnswer bytes, the slot is released, and then the answer is
// written under a write deadline, so clients that read slowly do not lock
// everyone else out of the planner. An answer past the bound is a 413.
func (s *Server) limitHeavy(asJSON bool, next http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if !s.takeHeavy(w, r, asJSON) {
			return
		}
		a := &answerBuffer{header: w.Header(), limit: s.maxAnswer}
		func() {
			defer func() { <-s.heavy }()
			next(a, r)
		}()
		if a.size > a.limit {
			s.tooLarge(w, a, asJSON)
			return
		}
		// The rendered answer is held until the client has read it: past
		// the budget of all answers being written, the request is refused
		// as when no slot is free.
		n := int64(a.buf.Len())
		if s.answerBytes.Add(n) > s.answerBudget {
			s.answerBytes.Add(-n)
			s.busy(w, asJSON)
			return
		}
		defer s.answerBytes.Add(-n)
		// Without a deadline of its own (a ResponseWriter that cannot set
		// one), the server's write timeout still bounds the write.
		_ = http.NewResponseController(w).SetWriteDeadline(time.Now().Add(heavyWriteWait))
		if a.code == 0 {
			a.code = http.StatusOK
		}
		w.WriteHeader(a.code)
		// A failed write means the client went away; there is no one to tell.
		w.Write(a.buf.Bytes())
	}
}

// takeHeavy takes a render slot, waiting up to heavyQueueWait; it answers
// 503 and reports false when none frees up.
func (s *Server) takeHeavy(w http.ResponseWriter, r *http.Request, asJSON bool) bool {
	select {
	case s.heavy <- struct{}{}:
		return true
	default:
	}
	t := time.NewTimer(heavyQueueWait)
	defer t.Stop()
	select {
	case s.heavy <- struct{}{}:
		return true
	case <-t.C:
		s.busy(w, asJSON)
	case <-r.Context().Done():
	}
	return false
}

// answerBuffer is the ResponseWriter an expensive handler renders into:
// it keeps the status and up to limit bytes of the body, and counts the
// bytes past the limit so that the refusal can say how large the answer
// would be. Its header is the real writer's.
type answerBuffer struct {
	header http.Header
	code   int
	buf    bytes.Buffer
	size   int
	limit  int
}

func (a *answerBuffer) Header() http.Header { return a.header }

func (a *answerBuffer) WriteHeader(code int) {
	if a.code == 0 {
		a.code = code
	}
}

func (a *answerBuffer) Write(p []byte) (int, error) {
	if a.code == 0 {
		a.code = http.StatusOK
	}
	a.size += len(p)
	switch {
	case a.size <= a.limit:
		a.buf.Write(p)
	case a.buf.Cap() > 0:
		a.buf = bytes.Buffer{} // over the bound: keep counting only
	}
	return len(p), nil
}

// tooLarge answers 413 for an answer of a.size bytes past the bound.
func (s *Server) tooLarge(w http.ResponseWriter, a *answerBuffer, asJSON bool) {
	msg := fmt.Sprintf("the answer would be %s, at most %s; narrow the query: fewer partitions, a smaller parallelism or target, or fewer keys",
		format.Bytes(int64(a.size)), format.Bytes(int64(a.limit)))
	for _, k := range []string{"Content-Disposition", "Content-Length", "Content-Type"} {
		w.Header().Del(k)
	}
	if asJSON {
		writeJSON(w, http.StatusRequestEntityTooLarge, apiErrorBody{Error: msg})
		return
	}
	http.Error(w, msg, http.StatusRequestEntityTooLarge)
}

func (s *Server) busy(w http.ResponseWriter, asJSON bool) {
	const msg = "server busy: too many large plans or lookups are being computed or sent; retry in a few seconds"
	w.Header().Set("Retry-After", strconv.Itoa(heavyRetryAfter))
	if asJSON {
		writeJSON(w, http.StatusServiceUnavailable, apiErrorBody{Error: msg})
		return
	}
	http.Error(w, msg, http.StatusServiceUnavailable)
}
