package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/pprof"
	"strings"
	"sync/atomic"
	"time"

	"github.com/skewscope/skewscope/internal/livebench"
	"github.com/skewscope/skewscope/live"
	"github.com/skewscope/skewscope/web"
)

// pagePath is the vertex page every load client watches; its
// data-live-topic names the websocket topic it subscribes to.
const pagePath = "/jobs/" + livebench.Job + "/vertices/" + livebench.Vertex

// statsPath is the server child's own counters, beside the dashboard's
// routes.
const statsPath = "/wsload/stats"

// childStats are the server child's counters.
type childStats struct {
	Polls int64 // Kafka and Flink polls handed to the store, history included
}

// serve is the server child: the dashboard's web server over a live store
// of one large Kafka source on a loopback port, the source polled once per
// interval until ctx is done. It prints "listening <addr>" first and
// "stats <metrics>" last.
func serve(ctx context.Context, cfg config, stdout, stderr io.Writer) error {
	ln, err := net.Listen("tcp", cfg.addr)
	if err != nil {
		return err
	}
	// Without --web.external-url the dashboard allowlists the loopback
	// origin of its listen address; do the same.
	s, err := newLoadServer(cfg, "http://"+ln.Addr().String(), stderr)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "listening %s\n", ln.Addr())
	return s.run(ctx, ln, stdout)
}

// loadServer is the store, the web server and the HTTP server of the
// server child.
type loadServer struct {
	cfg   config
	src   *livebench.Source
	web   *web.Server
	srv   *http.Server
	polls atomic.Int64
}

// newLoadServer builds the source's store with cfg.history polls of
// history (one every interval, the last now) and the web server over it,
// as cmd/dashboard builds it (internal/app: web.NewServer with the store
// as Options.Live), but for the connection bounds: every load client
// comes from the loopback address, and they are more than the default.
func newLoadServer(cfg config, origin string, stderr io.Writer) (*loadServer, error) {
	logger := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	src := livebench.New(livebench.Config{Partitions: cfg.partitions, Parallelism: cfg.subtasks, Seed: 1}, live.Options{})
	src.Fill(cfg.history, cfg.interval, time.Now())
	ws, err := web.NewServer(web.Options{
		Logger: logger,
		Live:   src.Store(),
		// As cmd/dashboard: the hub deflates each update once, for every
		// client that offers it (-compress).
		WebSocket: web.HubOptions{
			AllowedOrigins:          []string{origin},
			MaxConnections:          cfg.clients + 16,
			MaxConnectionsPerClient: -1,
			ReservedConnections:     -1,
			EnableCompression:       true,
		},
	})
	if err != nil {
		return nil, err
	}
	s := &loadServer{cfg: cfg, src: src, web: ws}
	s.polls.Store(int64(cfg.history))
	mux := http.NewServeMux()
	mux.Handle("/", ws)
	mux.HandleFunc("GET "+statsPath, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(childStats{Polls: s.polls.Load()})
	})
	// The run's -cpuprofile and -memprofile read the child's profiles.
	mux.HandleFunc("GET /debug/pprof/", pprof.Index)
	mux.HandleFunc("GET /debug/pprof/profile", pprof.Profile)
	s.srv = &http.Server{
		Handler:           mux,
		ReadHeaderTimeout: 5 * time.Second,
		ReadTimeout:       30 * time.Second,
		WriteTimeout:      60 * time.Second,
		IdleTimeout:       120 * time.Second,
		ErrorLog:          slog.NewLogLogger(logger.Handler(), slog.LevelWarn),
	}
	return s, nil
}

// run serves ln and polls the source once per interval until ctx is done,
// then shuts down and prints "stats " and the websocket lines of /metrics
// to stdout.
func (s *loadServer) run(ctx context.Context, ln net.Listener, stdout io.Writer) error {
	bg, cancelBG := context.WithCancel(context.Background())
	defer cancelBG()
	webDone := make(chan struct{})
	go func() { s.web.Run(bg); close(webDone) }()
	// Websockets are hijacked: Shutdown does not wait for them, the hub
	// closes them when bg is cancelled.
	s.srv.RegisterOnShutdown(cancelBG)
	srvErr := make(chan error, 1)
	go func() { srvErr <- s.srv.Serve(ln) }()
	s.web.SetReady(true)

	tick := time.NewTicker(s.cfg.interval)
	defer tick.Stop()
loop:
	for {
		select {
		case <-ctx.Done():
			break loop
		case err := <-srvErr:
			return err
		case <-tick.C:
			// The Flink poll's time is when it reaches the store: the
			// clients' latency runs from there.
			s.src.PollKafka(time.Now())
			s.src.PollFlink(time.Now())
			s.polls.Add(1)
		}
	}
	shutdownCtx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	err := s.srv.Shutdown(shutdownCtx)
	if errors.Is(err, http.ErrServerClosed) {
		err = nil
	}
	cancelBG()
	<-webDone
	fmt.Fprintf(stdout, "stats polls=%d %s\n", s.polls.Load(), websocketMetrics(s.web))
	return err
}

// websocketMetrics is the websocket lines of h's /metrics, joined by
// spaces.
func websocketMetrics(h http.Handler) string {
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/metrics", nil))
	var out []string
	for line := range strings.Lines(rec.Body.String()) {
		if strings.HasPrefix(line, "skewscope_websocket_") {
			out = append(out, strings.ReplaceAll(strings.TrimSpace(line), " ", "="))
		}
	}
	return strings.Join(out, " ")
}
