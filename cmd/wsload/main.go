// Command wsload measures the websocket hub (web.Hub) under the load of one
// busy view: N browser-like clients subscribed to one source-vertex topic
// of P partitions, with one update per second.
//
//	go run ./cmd/wsload -clients 1000 -partitions 10000 -for 60s [-compress]
//
// It re-executes itself with the hidden -serve flag to start the server in
// a child process, so that the server's CPU (utime+stime from
// /proc/<pid>/stat) and memory (VmHWM, VmRSS from /proc/<pid>/status) are
// measured alone, then opens the clients itself with gorilla's Dialer.
// Delivery latency is the receive time minus the update's "at" field (unix
// ms when published; both processes read the same clock). Clients and
// server share the machine, so on a small machine client CPU inflates the
// latency figures.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
	"time"
)

type config struct {
	serve       bool
	addr        string
	clients     int
	partitions  int
	subtasks    int
	dur         time.Duration
	interval    time.Duration
	compress    bool
	dialWorkers int
}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "wsload:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("wsload", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var cfg config
	fs.BoolVar(&cfg.serve, "serve", false, "") // hidden: run as the server child
	fs.StringVar(&cfg.addr, "addr", "127.0.0.1:0", "server listen address (child)")
	fs.IntVar(&cfg.clients, "clients", 1000, "websocket clients")
	fs.IntVar(&cfg.partitions, "partitions", 10000, "partitions of the source vertex")
	fs.IntVar(&cfg.subtasks, "subtasks", 64, "subtasks (parallelism) of the source vertex")
	fs.DurationVar(&cfg.dur, "for", 60*time.Second, "measurement window, after all clients are connected")
	fs.DurationVar(&cfg.interval, "interval", time.Second, "time between updates")
	fs.BoolVar(&cfg.compress, "compress", false, "negotiate permessage-deflate")
	fs.IntVar(&cfg.dialWorkers, "dial-concurrency", 50, "handshakes in flight while connecting")
	if err := fs.Parse(args); err != nil {
		return err
	}
	switch {
	case fs.NArg() > 0:
		return fmt.Errorf("unexpected arguments %q", fs.Args())
	case cfg.clients < 1, cfg.partitions < 1, cfg.subtasks < 1, cfg.dialWorkers < 1:
		return errors.New("-clients, -partitions, -subtasks and -dial-concurrency must be positive")
	case cfg.dur <= 0, cfg.interval <= 0:
		return errors.New("-for and -interval must be positive")
	}
	if cfg.serve {
		return serve(ctx, cfg, stdout, stderr)
	}
	res, err := load(ctx, cfg, stderr)
	if err != nil {
		return err
	}
	res.print(stdout)
	return nil
}
