package web

import (
	"io"
	"net/http"

	"github.com/go-chi/chi/v5"
	"github.com/go-chi/chi/v5/middleware"
	"github.com/klauspost/compress/gzip"

	"github.com/skewscope/skewscope/internal/quote"
)

// routes lists every URL skewscope serves.
func (s *Server) routes() http.Handler {
	root := chi.NewRouter()
	root.Use(middleware.RequestID)
	root.Use(s.recoverer)
	root.Use(s.logRequests)
	root.Use(securityHeaders)
	// Before any route, the prefix redirect included: a Host the policy
	// does not name is answered 421 (DNS rebinding).
	root.Use(s.checkHost)
	// Every POST is refused when a browser sends it from another origin.
	// Only /sandbox/restore and the key samples' start and cancel change
	// state; the planner, key lookup and bulk API posts only compute, and
	// each has a GET form (or is meant for non-browser clients, which send
	// neither Sec-Fetch-Site nor Origin), so refusing them loses nothing
	// and keeps any future state-changing route protected by default. GET, HEAD and OPTIONS
	// always pass: links from portals and alerts, and the /ws handshake,
	// which checks its Origin itself.
	root.Use(s.csrf.Handler)
	root.Use(middleware.GetHead)
	root.Use(compressor().Handler)
	if s.prefix == "" {
		s.mount(root)
		return root
	}
	root.Get("/", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, s.prefix+"/", http.StatusFound)
	})
	root.Route(s.prefix, s.mount)
	return root
}

// compressor gzips text answers at the fastest level, with klauspost's
// gzip (which the Kafka client links in already): it takes about half the
// time of compress/gzip for pages like the 10,000-partition planner.
func compressor() *middleware.Compressor {
	c := middleware.NewCompressor(1, "text/html", "text/css", "text/javascript", "application/json", "text/csv", "text/plain")
	c.SetEncoder("gzip", func(w io.Writer, level int) io.Writer {
		gw, err := gzip.NewWriterLevel(w, level)
		if err != nil {
			return nil
		}
		return gw
	})
	return c
}

// mount lists the routes under the route prefix.
func (s *Server) mount(r chi.Router) {
	r.Get("/", s.page(s.serveOverview))
	r.Get("/jobs/by-name/{job}", s.page(s.serveByName))
	r.Get("/jobs/by-name/{job}/vertices/{vertex}", s.page(s.serveByName))
	r.Get("/jobs/{jobID}", s.page(s.serveJob))
	r.Get("/jobs/{jobID}/vertices/{vertexID}", s.page(s.serveVertex))
	r.Get("/jobs/{jobID}/vertices/{vertexID}/plan", s.limitHeavy(false, s.page(s.servePlanFromLive)))
	r.Get("/kafka/{cluster}/topics/{topic}", s.page(s.serveTopic))
	r.Get("/kafka/{cluster}/topics/{topic}/sample", s.page(s.serveSampleForm))
	r.Post("/kafka/{cluster}/topics/{topic}/sample", s.page(s.serveSampleForm))
	r.Get("/samples", s.page(s.serveSamples))
	r.Get("/samples/{id}", s.page(s.serveSample))
	r.Get("/samples/{id}/keys.csv", s.api(s.serveSampleCSV))
	r.Post("/samples/{id}/cancel", s.page(s.serveSampleCancel))
	r.Post("/sandbox/restore", s.page(s.serveSandboxRestore))
	r.Get("/ws", s.hub.ServeWS)
	r.Get("/metrics", s.metrics.ServeHTTP)
	r.Get("/plan", s.limitHeavy(false, s.page(s.servePlan)))
	r.Post("/plan", s.limitHeavy(false, s.page(s.servePlan)))
	r.Get("/keys", s.limitHeavy(false, s.page(s.serveKeys)))
	r.Post("/keys", s.limitHeavy(false, s.page(s.serveKeys)))
	r.Get("/keys.csv", s.limitHeavy(true, s.api(s.serveKeysCSV)))
	r.Post("/keys.csv", s.limitHeavy(true, s.api(s.serveKeysCSV)))
	r.Get("/static/*", s.serveStatic)
	r.Get("/favicon.ico", s.serveFavicon)
	r.NotFound(s.page(s.serveNotFoundPage))

	// Operations: never depend on Kafka or Flink.
	r.Get("/healthz", s.serveHealthz)
	r.Head("/healthz", s.serveHealthz)
	r.Get("/-/healthy", s.serveHealthz)
	r.Get("/readyz", s.serveReadyz)
	r.Head("/readyz", s.serveReadyz)
	r.Get("/-/ready", s.serveReadyz)

	r.Route("/api/v1", func(r chi.Router) {
		r.Use(middleware.Timeout(apiTimeout))
		r.Get("/keygroup", s.api(s.serveKeyGroup))
		r.Post("/keygroup", s.limitHeavy(true, s.api(s.serveKeyGroupBulk)))
		r.Get("/keygroups/ranges", s.api(s.serveRanges))
		r.Get("/assignment", s.limitHeavy(true, s.api(s.serveAssignment)))
		r.Get("/plan", s.limitHeavy(true, s.api(s.servePlanJSON)))
		r.Get("/openapi.json", s.serveOpenAPI)
		r.Get("/version", s.api(s.serveVersion))
		r.Get("/overview", s.api(s.serveOverviewJSON))
		r.Get("/jobs", s.api(s.serveJobsJSON))
		r.Get("/jobs/by-name/{job}", s.api(s.serveJobByNameJSON))
		r.Get("/jobs/by-name/{job}/vertices/{vertex}", s.api(s.serveVertexByNameJSON))
		r.Get("/jobs/{jobID}", s.api(s.serveJobJSON))
		r.Get("/jobs/{jobID}/vertices/{vertexID}", s.api(s.serveVertexJSON))
		r.Get("/kafka/{cluster}/topics/{topic}", s.api(s.serveTopicJSON))
		r.Post("/kafka/{cluster}/topics/{topic}/samples", s.api(s.serveSampleStartJSON))
		r.Get("/samples", s.api(s.serveSamplesJSON))
		r.Get("/samples/{id}", s.api(s.serveSampleJSON))
		r.Post("/samples/{id}/cancel", s.api(s.serveSampleCancelJSON))
		r.NotFound(s.api(func(w http.ResponseWriter, r *http.Request) error {
			return &inputError{Status: http.StatusNotFound, Msg: "no such API endpoint: " + quote.Clip(r.URL.Path) + "; see /api/v1/openapi.json"}
		}))
		r.MethodNotAllowed(s.api(s.serveAPIMethodNotAllowed))
	})
}
