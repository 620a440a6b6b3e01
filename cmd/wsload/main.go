// Command wsload measures the dashboard's live updates under the load of
// one busy view: N browser-like clients watching the vertex page of a
// Kafka source of P partitions that is polled once per second.
//
//	go run ./cmd/wsload -clients 1000 -partitions 10000 -for 60s [-compress]
//
// It re-executes itself with the hidden -serve flag to start the server in
// a child process, so that the server's CPU (utime+stime from
// /proc/<pid>/stat) and memory (VmHWM, VmRSS from /proc/<pid>/status) are
// measured alone. The child is the dashboard's own server, built as
// cmd/dashboard builds it: web.NewServer over a live.Store, its hub and
// its publish loop, with the store fed by internal/livebench (a Kafka
// snapshot and a Flink snapshot per -interval, after -history of them)
// instead of collectors; the 360 polls of history of a 10,000-partition
// source take about 40 s on 2 cores before the clients connect. The parent
// reads the page's websocket topic from the page itself, then opens the
// clients with gorilla's Dialer; each
// subscribes as static/js/live.js does and gets the page's whole update
// first, then changes whose sparklines carry only the new samples.
//
// Update latency is the time from a Flink poll reaching the store to a
// client having read the whole message that first shows it: the update
// carries the poll's time as the page's data age ("ages":{"age":ms}), and
// the child stamps each poll with the time it hands it to the store (both
// processes read the same clock). It covers the store's update, the
// publish loop's pacing (at most one push per second), building the view
// and the update, encoding it once, the fan-out and the client's read.
// Clients and server share the machine, so on a small machine client CPU
// inflates the latency figures.
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
	history     int
	dur         time.Duration
	interval    time.Duration
	compress    bool
	dialWorkers int
	cpuProfile  string
	memProfile  string
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
	fs.IntVar(&cfg.history, "history", 360, "polls handed to the store before the clients connect (360 fill the sparklines)")
	fs.DurationVar(&cfg.dur, "for", 60*time.Second, "measurement window, after all clients are connected")
	fs.DurationVar(&cfg.interval, "interval", time.Second, "time between updates")
	fs.BoolVar(&cfg.compress, "compress", false, "negotiate permessage-deflate")
	fs.IntVar(&cfg.dialWorkers, "dial-concurrency", 50, "handshakes in flight while connecting")
	fs.StringVar(&cfg.cpuProfile, "cpuprofile", "", "write the server child's CPU profile over the window to this file")
	fs.StringVar(&cfg.memProfile, "memprofile", "", "write the server child's heap profile at the end of the window to this file")
	if err := fs.Parse(args); err != nil {
		return err
	}
	switch {
	case fs.NArg() > 0:
		return fmt.Errorf("unexpected arguments %q", fs.Args())
	case cfg.clients < 1, cfg.partitions < 1, cfg.subtasks < 1, cfg.dialWorkers < 1, cfg.history < 1:
		return errors.New("-clients, -partitions, -subtasks, -history and -dial-concurrency must be positive")
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
