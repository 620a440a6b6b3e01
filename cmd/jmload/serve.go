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

	"github.com/skewscope/skewscope/assign"
	"github.com/skewscope/skewscope/internal/benchstat"
	"github.com/skewscope/skewscope/internal/fakejm"
)

// childStats is the fake's /_stats answer: its counts since it started and
// its own CPU time.
type childStats struct {
	Stats      fakejm.Stats `json:"stats"`
	CPUSeconds float64      `json:"cpu_seconds"`
}

// fakeConfig is the fake JobManager of one shape.
func fakeConfig(cfg config, sh shape) fakejm.Config {
	fc := fakejm.Config{
		Jobs: sh.jobs, Parallelism: sh.parallelism, Partitions: sh.partitions,
		CheckpointEvery: cfg.checkpointEvery, EventTime: cfg.eventTime,
	}
	for _, t := range cfg.topics {
		fc.Topics = append(fc.Topics, assign.Topic{Name: t})
	}
	return fc
}

// serve is the child: the fake JobManager of the one shape on a loopback
// port, plus /_stats, until ctx is done. It prints "listening <addr>" once
// it accepts connections.
func serve(ctx context.Context, cfg config, stdout, stderr io.Writer) error {
	h, err := fakejm.New(fakeConfig(cfg, cfg.shapes[0]))
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", cfg.addr)
	if err != nil {
		return err
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /_stats", func(w http.ResponseWriter, r *http.Request) {
		cpu, err := benchstat.SelfCPU()
		var b []byte
		if err == nil {
			b, err = json.Marshal(childStats{Stats: h.Stats(), CPUSeconds: cpu.Seconds()})
		}
		if err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(b)
	})
	mux.Handle("/", h)
	logger := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	srv := &http.Server{
		Handler:           mux,
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       30 * time.Second,
		WriteTimeout:      5 * time.Minute,
		IdleTimeout:       2 * time.Minute,
		MaxHeaderBytes:    64 << 10,
		ErrorLog:          slog.NewLogLogger(logger.Handler(), slog.LevelWarn),
	}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	fmt.Fprintf(stdout, "listening %s\n", ln.Addr())
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	shutdown, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	return srv.Shutdown(shutdown)
}
