package web

import (
	"net/http"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/skewscope/skewscope/live"
)

// Metric descriptions. Labels carry what an alert rule needs to link back
// to the page: job_name and vertex_name build the link that survives
// restores, /jobs/by-name/{job_name}/vertices/{vertex_name}; job_id and
// vertex_id build /jobs/{job_id}/vertices/{vertex_id}, which goes stale when
// a restore gives the job a new id; cluster and topic build
// /kafka/{cluster}/topics/{topic}. No label is named job or instance:
// Prometheus sets those on every scraped series (target labels) and would
// rename ours to exported_job. vertex is the vertex name under its first
// label, kept for existing rules.
var (
	descPartitionLag = prometheus.NewDesc("skewscope_source_partition_lag_records",
		"Records behind the log end of a partition read by a Flink Kafka source subtask: end offset − (currentOffset + 1). Observed; not exported while the Flink or the Kafka figure is stale (see skewscope_backend_up).",
		[]string{"endpoint", "job_id", "vertex_id", "subtask", "cluster", "topic", "partition", "job_name", "vertex_name"}, nil)
	descPartitionLagSeconds = prometheus.NewDesc("skewscope_source_partition_lag_seconds",
		"Estimated time lag of the same partition (offset→time interpolation over the Kafka polls; a lower bound when older than the samples).",
		[]string{"endpoint", "job_id", "vertex_id", "subtask", "cluster", "topic", "partition", "job_name", "vertex_name"}, nil)
	descPartitionTimeToRetention = prometheus.NewDesc("skewscope_source_partition_time_to_retention_seconds",
		"Estimated seconds until the lag time of the same partition reaches its topic's retention (retention.ms, read from the brokers), at the lag time's trend over the recent polls: after it Kafka deletes records before the source reads them; 0 once there. Exported only while the lag time grows, the retention is finite and the cleanup policy deletes, and Flink's and Kafka's figures are fresh.",
		[]string{"endpoint", "job_id", "vertex_id", "subtask", "cluster", "topic", "partition", "job_name", "vertex_name"}, nil)
	descPartitionBehindStart = prometheus.NewDesc("skewscope_source_partition_behind_log_start_records",
		"Records of a partition read by a Flink Kafka source subtask that were deleted (retention, DeleteRecords) before it read them: log start offset − (currentOffset + 1), 0 while the reader is at or past the log start. Exported while Flink's and Kafka's figures are both fresh and the reader is determined.",
		[]string{"endpoint", "job_id", "vertex_id", "subtask", "cluster", "topic", "partition", "job_name", "vertex_name"}, nil)
	descPartitionLost = prometheus.NewDesc("skewscope_source_partition_records_lost_total",
		"Records of a partition that Kafka deleted (retention, DeleteRecords) before a Flink Kafka source read them, observed by skewscope since it started: a restart starts again at 0, as counters do. Each deleted offset counts once, when a poll sees the partition's log start above the source's position (currentOffset + 1); deletions the Kafka client skipped between two polls are missed. Per source by name (job_name, vertex_name), so it goes on across restores; exported while a job of that name runs.",
		[]string{"endpoint", "cluster", "topic", "partition", "job_name", "vertex_name"}, nil)
	descGroupLost = prometheus.NewDesc("skewscope_group_partition_records_lost_total",
		"Records of a partition that Kafka deleted before a consumer group committed past them (log start above the committed offset), observed since skewscope started; for a Flink group the job may have read some of them without committing yet (it commits on checkpoint).",
		[]string{"cluster", "group", "topic", "partition"}, nil)
	descSubtaskBusy = prometheus.NewDesc("skewscope_subtask_busy_ratio",
		"Flink busyTimeMsPerSecond / 1000 of a subtask. Observed.",
		[]string{"endpoint", "job_id", "vertex_id", "subtask", "job_name", "vertex_name"}, nil)
	descVertexSkew = prometheus.NewDesc("skewscope_vertex_skew_percent",
		"Flink's data skew (FLIP-418 formula) of records/s per subtask of a vertex, computed from observed rates.",
		[]string{"endpoint", "job_id", "vertex_id", "vertex", "job_name", "vertex_name"}, nil)
	descVertexMaxBusy = prometheus.NewDesc("skewscope_vertex_busy_max_ratio",
		"Highest busy ratio among a vertex's subtasks. Observed.",
		[]string{"endpoint", "job_id", "vertex_id", "vertex", "job_name", "vertex_name"}, nil)
	descDrift = prometheus.NewDesc("skewscope_source_assignment_drift_partitions",
		"Partitions of a Kafka source whose observed subtask differs from the prediction (fresh start or restore model); 0 when they match.",
		[]string{"endpoint", "job_id", "vertex_id", "vertex", "mode", "job_name", "vertex_name"}, nil)
	descGroupLag = prometheus.NewDesc("skewscope_group_partition_lag_records",
		"End offset − committed offset of a consumer group on a partition (Flink's member-less groups included). Observed.",
		[]string{"cluster", "group", "topic", "partition"}, nil)
	descGroupLagSeconds = prometheus.NewDesc("skewscope_group_partition_lag_seconds",
		"Estimated time lag of a group's commit on a partition.",
		[]string{"cluster", "group", "topic", "partition"}, nil)
	descUp = prometheus.NewDesc("skewscope_backend_up",
		"1 when the latest poll of a backend succeeded, 0 otherwise.",
		[]string{"kind", "name"}, nil)
	descState = prometheus.NewDesc("skewscope_backend_state",
		"1 for the state a backend is in, 0 for the others: ok, failing (the latest poll failed after an earlier one succeeded), never reached (no poll ever succeeded) or not yet polled (the first poll has not ended).",
		[]string{"kind", "name", "state"}, nil)
	descLastPoll = prometheus.NewDesc("skewscope_backend_last_poll_timestamp_seconds",
		"Start time of the latest poll of a backend.", []string{"kind", "name"}, nil)
	descPollDuration = prometheus.NewDesc("skewscope_backend_poll_duration_seconds",
		"Duration of the latest poll of a backend.", []string{"kind", "name"}, nil)
	descFlinkRequests = prometheus.NewDesc("skewscope_flink_poll_requests",
		"HTTP requests the latest poll of a Flink endpoint sent.", []string{"name"}, nil)
	descFlinkBytes = prometheus.NewDesc("skewscope_flink_poll_response_bytes",
		"Response body bytes the latest poll of a Flink endpoint read.", []string{"name"}, nil)
	descFlinkBackoff = prometheus.NewDesc("skewscope_flink_backoff_polls",
		"Bad polls in a row of a Flink endpoint (failing or slow) while skewscope polls it less often; 0 when not backing off.", []string{"name"}, nil)
	descWSConnections = prometheus.NewDesc("skewscope_websocket_connections", "Open websocket connections.", nil, nil)
	descWSDropped     = prometheus.NewDesc("skewscope_websocket_dropped_clients_total", "Slow websocket clients dropped.", nil, nil)
	descWSSent        = prometheus.NewDesc("skewscope_websocket_messages_sent_total", "Websocket messages written.", nil, nil)
	descWSRefused     = prometheus.NewDesc("skewscope_websocket_refused_total",
		"Websockets refused or closed by a bound, by reason: handshake (origin, connection bounds), subscribe (a bad or too large subscribe message), topics (distinct views per address or in all), idle (no subscription in time).", []string{"reason"}, nil)
	descWSInbound = prometheus.NewDesc("skewscope_websocket_inbound_bytes_total", "Bytes of inbound websocket messages read, after decompression.", nil, nil)
	descViews     = prometheus.NewDesc("skewscope_live_views_built_total",
		"Live views (vertex, job, topic and overview) built from the store, for pages, JSON answers and websocket updates; a scrape of /metrics builds none.", nil, nil)
)

// liveCollector exports the live store's figures at scrape time.
type liveCollector struct{ s *Server }

func (c liveCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{descPartitionLag, descPartitionLagSeconds, descPartitionTimeToRetention, descPartitionBehindStart, descPartitionLost, descGroupLost, descSubtaskBusy, descVertexSkew,
		descVertexMaxBusy, descDrift, descGroupLag, descGroupLagSeconds, descUp, descState, descLastPoll, descPollDuration,
		descFlinkRequests, descFlinkBytes, descFlinkBackoff, descWSConnections, descWSDropped, descWSSent, descWSRefused, descWSInbound, descViews} {
		ch <- d
	}
}

func gauge(ch chan<- prometheus.Metric, d *prometheus.Desc, v float64, labels ...string) {
	ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, v, labels...)
}

func itoa(i int) string { return strconv.Itoa(i) }

func (c liveCollector) Collect(ch chan<- prometheus.Metric) {
	st := c.s.hub.Stats()
	gauge(ch, descWSConnections, float64(st.Connections))
	ch <- prometheus.MustNewConstMetric(descWSDropped, prometheus.CounterValue, float64(st.Dropped))
	ch <- prometheus.MustNewConstMetric(descWSSent, prometheus.CounterValue, float64(st.Sent))
	for _, r := range []struct {
		reason string
		n      uint64
	}{{"handshake", st.Rejected}, {"subscribe", st.BadSubscribers}, {"topics", st.TopicsRefused}, {"idle", st.Unsubscribed}} {
		ch <- prometheus.MustNewConstMetric(descWSRefused, prometheus.CounterValue, float64(r.n), r.reason)
	}
	ch <- prometheus.MustNewConstMetric(descWSInbound, prometheus.CounterValue, float64(st.InboundBytes))
	store := c.s.live
	if store == nil {
		return
	}
	ch <- prometheus.MustNewConstMetric(descViews, prometheus.CounterValue, float64(store.ViewsBuilt()))
	mf := store.State().MetricFacts()
	for _, k := range mf.Clusters {
		backendMetrics(ch, "kafka", k.Name, k.Age, k.PollMillis)
	}
	for _, g := range mf.GroupLags {
		part := itoa(int(g.Partition))
		gauge(ch, descGroupLag, float64(g.Lag), g.Cluster, g.Group, g.Topic, part)
		if g.LagSecondsKnown {
			gauge(ch, descGroupLagSeconds, g.LagSeconds, g.Cluster, g.Group, g.Topic, part)
		}
	}
	for _, l := range mf.SourceLosses {
		ch <- prometheus.MustNewConstMetric(descPartitionLost, prometheus.CounterValue, float64(l.Records),
			l.Endpoint, l.Cluster, l.Topic, itoa(int(l.Partition)), l.Job, l.Vertex)
	}
	for _, l := range mf.GroupLosses {
		ch <- prometheus.MustNewConstMetric(descGroupLost, prometheus.CounterValue, float64(l.Records), l.Cluster, l.Group, l.Topic, itoa(int(l.Partition)))
	}
	for _, e := range mf.Endpoints {
		backendMetrics(ch, "flink", e.Name, e.Age, e.PollMillis)
		if e.Age.State != live.StateNotPolled {
			gauge(ch, descFlinkRequests, float64(e.Cost.Requests), e.Name)
			gauge(ch, descFlinkBytes, float64(e.Cost.Bytes), e.Name)
			gauge(ch, descFlinkBackoff, float64(e.Budget.BackoffPolls), e.Name)
		}
	}
	for _, v := range mf.Vertices {
		vertexMetrics(ch, &v)
	}
}

// vertexMetrics exports a running job's vertex: its skew and busiest
// subtask, a source's drift, each subtask's busy ratio and a source's
// partitions (store.MetricFacts says which are exported).
func vertexMetrics(ch chan<- prometheus.Metric, v *live.VertexFact) {
	if v.Skew >= 0 {
		gauge(ch, descVertexSkew, v.Skew, v.Endpoint, v.JobID, v.ID, v.Name, v.JobName, v.Name)
	}
	if v.MaxBusy >= 0 {
		gauge(ch, descVertexMaxBusy, v.MaxBusy, v.Endpoint, v.JobID, v.ID, v.Name, v.JobName, v.Name)
	}
	if v.PredictionMode != "" && v.PredictionMode != live.ModeNone {
		gauge(ch, descDrift, float64(v.Drift), v.Endpoint, v.JobID, v.ID, v.Name, v.PredictionMode, v.JobName, v.Name)
	}
	for i, b := range v.Busy {
		if b >= 0 {
			gauge(ch, descSubtaskBusy, b, v.Endpoint, v.JobID, v.ID, itoa(i), v.JobName, v.Name)
		}
	}
	for _, p := range v.Partitions {
		sub, part := itoa(p.Subtask), itoa(int(p.Partition))
		gauge(ch, descPartitionLag, float64(p.Lag), v.Endpoint, v.JobID, v.ID, sub, v.Cluster, p.Topic, part, v.JobName, v.Name)
		if p.LagSecondsKnown {
			gauge(ch, descPartitionLagSeconds, p.LagSeconds, v.Endpoint, v.JobID, v.ID, sub, v.Cluster, p.Topic, part, v.JobName, v.Name)
		}
		if p.TimeToRetentionSeconds >= 0 {
			gauge(ch, descPartitionTimeToRetention, p.TimeToRetentionSeconds, v.Endpoint, v.JobID, v.ID, sub, v.Cluster, p.Topic, part, v.JobName, v.Name)
		}
		if p.BehindLogStart >= 0 {
			gauge(ch, descPartitionBehindStart, float64(p.BehindLogStart), v.Endpoint, v.JobID, v.ID, sub, v.Cluster, p.Topic, part, v.JobName, v.Name)
		}
	}
}

// backendStates are the values of skewscope_backend_state's state label.
var backendStates = []string{live.StateOK, live.StateFailing, live.StateNeverReached, live.StateNotPolled}

// backendMetrics exports one backend's up, state and latest poll; a
// backend whose first poll has not ended has no poll to report.
func backendMetrics(ch chan<- prometheus.Metric, kind, name string, a live.Age, pollMillis int64) {
	up := 1.0
	if a.Err != "" || a.Stale {
		up = 0
	}
	gauge(ch, descUp, up, kind, name)
	for _, st := range backendStates {
		v := 0.0
		if a.State == st {
			v = 1
		}
		gauge(ch, descState, v, kind, name, st)
	}
	if a.State == live.StateNotPolled {
		return
	}
	gauge(ch, descLastPoll, float64(a.Tried.UnixMilli())/1000, kind, name)
	gauge(ch, descPollDuration, float64(pollMillis)/1000, kind, name)
}

// newMetrics builds /metrics on a registry of its own: Go and process
// collectors, build info and the live figures.
func (s *Server) newMetrics() http.Handler {
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	reg.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name: "skewscope_build_info", Help: "Build information; the value is 1.",
		ConstLabels: prometheus.Labels{"version": s.version},
	}, func() float64 { return 1 }))
	reg.MustRegister(liveCollector{s})
	return promhttp.HandlerFor(reg, promhttp.HandlerOpts{
		EnableOpenMetrics:   true,
		MaxRequestsInFlight: 4,
		Timeout:             10 * time.Second,
		ErrorLog:            slogPrinter{s},
	})
}

type slogPrinter struct{ s *Server }

func (p slogPrinter) Println(v ...any) { p.s.log.Warn("metrics", "error", v) }
