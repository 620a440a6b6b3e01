// Command dashboard serves skewscope: which Flink subtask owns which Kafka
// partitions and key groups, how uneven that is, and what a parallelism
// change would do.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"runtime/debug"
	"sync"
	"syscall"
	"time"

	"github.com/skewscope/skewscope/collectors/flink"
	"github.com/skewscope/skewscope/collectors/kafka"
	"github.com/skewscope/skewscope/internal/app"
	"github.com/skewscope/skewscope/live"
	"github.com/skewscope/skewscope/sandbox"
	"github.com/skewscope/skewscope/web"
)

// Server timeouts. The write timeout is generous because a bulk key lookup
// or a large plan may take a while to send to a slow client.
const (
	readHeaderTimeout = 5 * time.Second
	readTimeout       = 30 * time.Second
	writeTimeout      = 60 * time.Second
	idleTimeout       = 120 * time.Second
	shutdownTimeout   = 15 * time.Second
)

func main() {
	// Signals are caught before anything else, the configuration included,
	// and every start-up step gives way to them (startStep).
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	// The first signal starts the graceful shutdown; a second one ends the
	// process at once (the default disposition comes back).
	context.AfterFunc(ctx, stop)
	if err := run(ctx, os.Args[1:], os.Getenv, os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "dashboard:", err)
		os.Exit(1)
	}
}

// run starts the server and blocks until ctx is done, then shuts down
// gracefully. It reports the address it listens on through the log. When
// ctx is done during start-up, run returns at once with an error saying
// so, whatever step it was at.
func run(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	cfg, err := startStep(ctx, "reading the configuration", func() (appConfig, error) {
		return parseConfig(args, getenv, stderr)
	}, nil)
	if err != nil {
		return err
	}
	log := newLogger(cfg, stderr)
	version := buildVersion()

	for _, w := range cfg.warnings() {
		log.Warn(w)
	}
	log.Debug("effective configuration", "config", cfg)

	if err := interrupted(ctx, "listening"); err != nil {
		return err
	}
	ln, err := net.Listen("tcp", cfg.Listen)
	if err != nil {
		return fmt.Errorf("listen on %s: %w", cfg.Listen, err)
	}
	defer ln.Close()

	// Background work (sandbox, pollers, websocket pushes) stops when bg is
	// cancelled, after the HTTP server has shut down.
	bg, cancelBG := context.WithCancel(context.WithoutCancel(ctx))
	var wg sync.WaitGroup
	defer func() {
		cancelBG()
		wg.Wait()
	}()

	var sb *sandbox.Sandbox
	if cfg.Sandbox {
		start := time.Now()
		// A sandbox that starts after a signal closes itself: bg is
		// cancelled when run returns.
		sb, err = startStep(ctx, "starting the sandbox", func() (*sandbox.Sandbox, error) {
			return sandbox.Start(bg, sandbox.Options{Logger: log.With("component", "sandbox")})
		}, func(sb *sandbox.Sandbox) { sb.Close() })
		if errors.Is(err, errInterrupted) {
			return err
		}
		if err != nil {
			return fmt.Errorf("start the sandbox: %w", err)
		}
		defer sb.Close()
		// The log start offsets are re-read at every poll, so that the
		// records the sandbox deletes before its hot subtask reads them are
		// seen (and counted) while that subtask is behind them.
		cfg.Kafka = []kafka.Config{{Name: "sandbox", Brokers: sb.KafkaBrokers(), PollInterval: 2 * time.Second, LogStartRefresh: 2 * time.Second}}
		cfg.Flink = []flink.Config{{Name: "sandbox", URL: sb.FlinkURL(), Kafka: "sandbox", PollInterval: 2 * time.Second}}
		log.Info("sandbox started: no Kafka or Flink configured, serving simulated ones", "took", time.Since(start).Round(time.Millisecond),
			"kafka", sb.KafkaBrokers(), "flink", sb.FlinkURL())
	}

	if err := interrupted(ctx, "starting the collectors"); err != nil {
		return err
	}
	links := make([]live.Link, 0, len(cfg.SourceGroups))
	for _, l := range cfg.SourceGroups {
		links = append(links, live.Link{Endpoint: l.Endpoint, Job: l.Job, Vertex: l.Vertex, Group: l.Group})
	}
	opts := web.Options{
		Logger: log, Version: version,
		RoutePrefix: cfg.RoutePrefix, FrameAncestors: cfg.FrameAncestors,
		KafkaClusters: cfg.Kafka, Samples: cfg.Samples, UserHeader: cfg.UserHeader, Hosts: cfg.hostPolicy(),
		// Updates name their elements by key and compress well: the hub
		// deflates each once, for every client that offers it.
		WebSocket: web.HubOptions{AllowedOrigins: cfg.websocketOrigins(ln.Addr().String()),
			MaxConnectionsPerClient: cfg.WSMaxPerAddress, MaxTopicsPerClient: cfg.WSMaxTopicsPerAddress,
			TrustedProxies: cfg.TrustedProxies, EnableCompression: true},
	}
	if sb != nil {
		opts.Sandbox = sb
	}
	dash, err := app.New(app.Config{Kafka: cfg.Kafka, Flink: cfg.Flink, Links: links, FlinkUI: cfg.FlinkUI, KafkaUI: cfg.KafkaUI, Web: opts}, log)
	if err != nil {
		return err
	}
	dash.Start(bg, &wg)
	srv := dash.Server
	if err := interrupted(ctx, "starting the web server"); err != nil {
		return err
	}
	wg.Add(1)
	go func() {
		defer wg.Done()
		srv.Run(bg)
	}()
	hs := &http.Server{
		Handler:           srv,
		ReadHeaderTimeout: readHeaderTimeout,
		ReadTimeout:       readTimeout,
		WriteTimeout:      writeTimeout,
		IdleTimeout:       idleTimeout,
		ErrorLog:          slog.NewLogLogger(log.Handler(), slog.LevelWarn),
	}
	// Websockets are hijacked: Shutdown does not wait for them, the hub
	// closes them (code 1001) when bg is cancelled.
	hs.RegisterOnShutdown(cancelBG)
	log.Info("skewscope listening", "address", ln.Addr().String(), "version", version)
	fmt.Fprintf(stdout, "skewscope: http://%s%s/\n", ln.Addr(), cfg.RoutePrefix)

	errc := make(chan error, 1)
	go func() { errc <- hs.Serve(ln) }()
	srv.SetReady(true)

	select {
	case err := <-errc:
		return fmt.Errorf("serve: %w", err)
	case <-ctx.Done():
	}
	log.Info("shutting down")
	srv.SetReady(false)
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), shutdownTimeout)
	defer cancel()
	if err := hs.Shutdown(sctx); err != nil {
		return fmt.Errorf("shutdown: %w", err)
	}
	if err := <-errc; err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	log.Info("stopped")
	return nil
}

// errInterrupted is the error run returns when ctx is done before it
// serves: a signal during start-up.
var errInterrupted = errors.New("start-up interrupted")

// interrupted returns an error naming the step about to start when ctx is
// done, and nil otherwise.
func interrupted(ctx context.Context, step string) error {
	if ctx.Err() == nil {
		return nil
	}
	return fmt.Errorf("%w before %s: %v", errInterrupted, step, context.Cause(ctx))
}

// startStep runs a start-up step that may be slow (a file on a stuck
// mount, the sandbox's start) and returns its result, or returns as soon as
// ctx is done with an error naming the step. A result that arrives after
// that is given to undo, if not nil, so that nothing started stays open.
func startStep[T any](ctx context.Context, step string, f func() (T, error), undo func(T)) (T, error) {
	var zero T
	if err := interrupted(ctx, step); err != nil {
		return zero, err
	}
	type result struct {
		v   T
		err error
	}
	done := make(chan result, 1)
	go func() {
		v, err := f()
		done <- result{v, err}
	}()
	select {
	case r := <-done:
		return r.v, r.err
	case <-ctx.Done():
		if undo != nil {
			go func() {
				if r := <-done; r.err == nil {
					undo(r.v)
				}
			}()
		}
		return zero, fmt.Errorf("%w while %s: %v", errInterrupted, step, context.Cause(ctx))
	}
}

// buildVersion returns the module version or VCS revision of this binary.
func buildVersion() string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return "unknown"
	}
	v := bi.Main.Version
	for _, s := range bi.Settings {
		if s.Key == "vcs.revision" && len(s.Value) >= 12 {
			v += "+" + s.Value[:12]
		}
	}
	return v
}
