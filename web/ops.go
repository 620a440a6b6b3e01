package web

import (
	_ "embed"
	"net/http"
	"time"
)

// apiTimeout bounds one API request's work.
const apiTimeout = 30 * time.Second

func (s *Server) serveHealthz(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Write([]byte("ok\n"))
}

// serveReadyz answers 200 once the server is ready and until shutdown
// begins. It never depends on Kafka or Flink being reachable.
func (s *Server) serveReadyz(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	if !s.ready.Load() {
		w.WriteHeader(http.StatusServiceUnavailable)
		w.Write([]byte("not ready\n"))
		return
	}
	w.Write([]byte("ready\n"))
}

func (s *Server) serveVersion(w http.ResponseWriter, r *http.Request) error {
	return writeJSON(w, http.StatusOK, struct {
		Version string `json:"version"`
	}{s.version})
}

//go:embed openapi.json
var openAPISpec []byte

// serveOpenAPI serves the OpenAPI 3.1 description of the JSON API.
func (s *Server) serveOpenAPI(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.Write(openAPISpec)
}
