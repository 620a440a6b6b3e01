package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"time"

	"github.com/skewscope/skewscope/web"
)

// topic is the one view every load client watches.
const topic = "vertex:sandbox/JOB/VERTEX"

// serve is the server child: a web.Hub behind an http.Server on a
// loopback port, publishing one vertex update per interval until ctx is
// done. It prints "listening <addr>" first and "stats <json>" last.
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

// loadServer is the hub and the HTTP server of the server child.
type loadServer struct {
	cfg config
	hub *web.Hub
	srv *http.Server
}

// newLoadServer builds a hub that admits every load client from origin,
// serving /ws and /stats.
func newLoadServer(cfg config, origin string, stderr io.Writer) (*loadServer, error) {
	logger := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	hub, err := web.NewHub(logger, web.HubOptions{
		AllowedOrigins: []string{origin},
		MaxConnections: cfg.clients + 16,
		// Every load client comes from the loopback address.
		MaxConnectionsPerClient: -1,
		ReservedConnections:     -1,
		EnableCompression:       cfg.compress,
	})
	if err != nil {
		return nil, err
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /ws", hub.ServeWS)
	mux.HandleFunc("GET /stats", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(hub.Stats())
	})
	srv := &http.Server{
		Handler:           mux,
		ReadHeaderTimeout: 5 * time.Second,
		ReadTimeout:       30 * time.Second,
		WriteTimeout:      60 * time.Second,
		IdleTimeout:       120 * time.Second,
		MaxHeaderBytes:    64 << 10,
		ErrorLog:          slog.NewLogLogger(logger.Handler(), slog.LevelWarn),
	}
	return &loadServer{cfg: cfg, hub: hub, srv: srv}, nil
}

// run serves ln and publishes one update per interval until ctx is done,
// then shuts down and prints "stats <json>" to stdout.
func (s *loadServer) run(ctx context.Context, ln net.Listener, stdout io.Writer) error {
	hub, srv := s.hub, s.srv
	hubCtx, stopHub := context.WithCancel(context.Background())
	defer stopHub()
	hubDone := make(chan struct{})
	go func() { hub.Run(hubCtx); close(hubDone) }()
	srvErr := make(chan error, 1)
	go func() { srvErr <- srv.Serve(ln) }()

	gen := newVertexGen(s.cfg.partitions, s.cfg.subtasks, 1)
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
			if err := hub.Publish(topic, gen.next(time.Now())); err != nil {
				return err
			}
		}
	}
	shutdownCtx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	err := srv.Shutdown(shutdownCtx)
	stopHub() // closes the websockets, which Shutdown leaves alone
	<-hubDone
	st, _ := json.Marshal(hub.Stats())
	fmt.Fprintf(stdout, "stats %s\n", st)
	return err
}
