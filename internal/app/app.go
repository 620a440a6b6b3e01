// Package app builds skewscope's running parts from a configuration: one
// collector per Kafka cluster and Flink endpoint, the live store they feed
// (with the hints each side gives the other) and the web server over it.
// cmd/dashboard and the end-to-end tests build the dashboard through [New]
// alike, so that no wiring exists only in main.
package app

import (
	"context"
	"fmt"
	"log/slog"
	"sync"

	"github.com/skewscope/skewscope/collectors/flink"
	"github.com/skewscope/skewscope/collectors/kafka"
	"github.com/skewscope/skewscope/internal/linkout"
	"github.com/skewscope/skewscope/live"
	"github.com/skewscope/skewscope/web"
)

// Config is what [New] builds from.
type Config struct {
	Kafka []kafka.Config
	Flink []flink.Config
	// Links name the consumer groups of source vertices from configuration.
	Links []live.Link
	// FlinkUI and KafkaUI link pages to each endpoint's Flink Web UI and
	// each cluster's Kafka UI, by name (web.Options.FlinkUI, KafkaUI); New
	// sets them in Web. The sandbox's endpoint has none: it serves REST
	// only.
	FlinkUI map[string]linkout.Flink
	KafkaUI map[string]linkout.Kafka
	// Web configures the server; its Live is set by New (nil when no Kafka
	// or Flink is configured).
	Web web.Options
}

// App is a built dashboard: its collectors, its store and its server.
// Nothing polls until [App.Start].
type App struct {
	Store  *live.Store // nil when no backend is configured
	Server *web.Server
	Kafka  []*kafka.Collector // in Config.Kafka's order
	Flink  []*flink.Collector // in Config.Flink's order
}

// New creates the collectors, the store and the web server. On an error
// every collector made so far is closed.
func New(cfg Config, log *slog.Logger) (*App, error) {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	a := &App{}
	if len(cfg.Kafka) > 0 || len(cfg.Flink) > 0 {
		if err := a.buildLive(cfg, log); err != nil {
			a.Close()
			return nil, err
		}
	}
	opts := cfg.Web
	opts.Live = a.Store
	opts.FlinkUI, opts.KafkaUI = cfg.FlinkUI, cfg.KafkaUI
	srv, err := web.NewServer(opts)
	if err != nil {
		a.Close()
		return nil, err
	}
	a.Server = srv
	return a, nil
}

// buildLive creates one collector per Kafka cluster and Flink endpoint
// and the store they feed. The store knows every backend from the start,
// so that the overview lists those not yet polled.
func (a *App) buildLive(cfg Config, log *slog.Logger) error {
	opts := live.Options{EndpointKafka: map[string]string{}, Links: cfg.Links}
	for _, f := range cfg.Flink {
		opts.EndpointKafka[f.Name] = f.Kafka
	}
	kafkaCols := make(map[string]*kafka.Collector, len(cfg.Kafka))
	flinkCols := make(map[string]*flink.Collector, len(cfg.Flink))
	for _, kc := range cfg.Kafka {
		col, err := kafka.NewKafkaCollector(kc, log.With("kafka", kc.Name))
		if err != nil {
			return fmt.Errorf("kafka cluster %s: %w", kc.Name, err)
		}
		a.Kafka = append(a.Kafka, col)
		kafkaCols[kc.Name] = col
		opts.Kafka = append(opts.Kafka, kc.Name)
	}
	for _, fc := range cfg.Flink {
		col, err := flink.NewCollector(fc, log.With("flink", fc.Name))
		if err != nil {
			return fmt.Errorf("flink endpoint %s: %w", fc.Name, err)
		}
		a.Flink = append(a.Flink, col)
		flinkCols[fc.Name] = col
		opts.Flink = append(opts.Flink, live.Endpoint{Name: fc.Name, URL: col.URL()})
	}
	// The store hints a Flink collector at partitions that Kafka lists and
	// its source's metric ids do not name yet, and a Kafka collector at
	// partitions Flink names that its metadata does not have; it has a
	// Kafka collector read the partitions of the topics that running
	// sources read on every poll.
	opts.OnUnlisted = func(endpoint, jobID, vertexID string) {
		if c := flinkCols[endpoint]; c != nil {
			c.HintMetricIDs(jobID, vertexID)
		}
	}
	opts.OnUnknownPartitions = func(cluster string) {
		if c := kafkaCols[cluster]; c != nil {
			c.HintMetadata()
		}
	}
	opts.OnFollow = func(cluster string, topics []string) {
		if c := kafkaCols[cluster]; c != nil {
			c.Follow(topics)
		}
	}
	a.Store = live.New(opts)
	for _, col := range a.Kafka {
		col.OnSnapshot(a.Store.UpdateKafka)
	}
	for _, col := range a.Flink {
		col.OnSnapshot(a.Store.UpdateFlink)
	}
	return nil
}

// Start runs every collector's poller on its own goroutine, counted in
// wg, until ctx is done; each collector is closed when its poller ends.
func (a *App) Start(ctx context.Context, wg *sync.WaitGroup) {
	for _, col := range a.Kafka {
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer col.Close()
			col.Run(ctx)
		}()
	}
	for _, col := range a.Flink {
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer col.Close()
			col.Run(ctx)
		}()
	}
}

// Close closes every collector; for an App that is not started (a test
// that polls by hand). Closing twice is harmless.
func (a *App) Close() {
	for _, c := range a.Kafka {
		c.Close()
	}
	for _, c := range a.Flink {
		c.Close()
	}
}
