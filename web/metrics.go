package web

import (
	"fmt"
	"net/http"
	"strconv"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/common/expfmt"

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
	descPartitionLag = newFamily("skewscope_source_partition_lag_records",
		"Records behind the log end of a partition read by a Flink Kafka source subtask: end offset − (currentOffset + 1). Observed; not exported while the Flink or the Kafka figure is stale (see skewscope_backend_up).", "endpoint", "job_id", "vertex_id", "subtask", "cluster", "topic", "partition", "job_name", "vertex_name")
	descPartitionLagSeconds = newFamily("skewscope_source_partition_lag_seconds",
		"Estimated time lag of the same partition (offset→time interpolation over the Kafka polls; a lower bound when older than the samples).", "endpoint", "job_id", "vertex_id", "subtask", "cluster", "topic", "partition", "job_name", "vertex_name")
	descPartitionTimeToRetention = newFamily("skewscope_source_partition_time_to_retention_seconds",
		"Estimated seconds until the lag time of the same partition reaches its topic's retention (retention.ms, read from the brokers), at the lag time's trend over the recent polls: after it Kafka deletes records before the source reads them; 0 once there. Exported only while the lag time grows, the retention is finite and the cleanup policy deletes, and Flink's and Kafka's figures are fresh.", "endpoint", "job_id", "vertex_id", "subtask", "cluster", "topic", "partition", "job_name", "vertex_name")
	descPartitionBehindStart = newFamily("skewscope_source_partition_behind_log_start_records",
		"Records of a partition read by a Flink Kafka source subtask that were deleted (retention, DeleteRecords) before it read them: log start offset − (currentOffset + 1), 0 while the reader is at or past the log start. Exported while Flink's and Kafka's figures are both fresh and the reader is determined.", "endpoint", "job_id", "vertex_id", "subtask", "cluster", "topic", "partition", "job_name", "vertex_name")
	descPartitionLost = newCounter("skewscope_source_partition_records_lost_total",
		"Records of a partition that Kafka deleted (retention, DeleteRecords) before a Flink Kafka source read them, observed by skewscope since it started: a restart starts again at 0, as counters do. Each deleted offset counts once, when a poll sees the partition's log start above the source's position (currentOffset + 1); deletions the Kafka client skipped between two polls are missed. Per source by name (job_name, vertex_name), so it goes on across restores; exported while a job of that name runs.", "endpoint", "cluster", "topic", "partition", "job_name", "vertex_name")
	descGroupLost = newCounter("skewscope_group_partition_records_lost_total",
		"Records of a partition that Kafka deleted before a consumer group committed past them (log start above the committed offset), observed since skewscope started; for a Flink group the job may have read some of them without committing yet (it commits on checkpoint).", "cluster", "group", "topic", "partition")
	descSubtaskBusy = newFamily("skewscope_subtask_busy_ratio",
		"Flink busyTimeMsPerSecond / 1000 of a subtask. Observed.", "endpoint", "job_id", "vertex_id", "subtask", "job_name", "vertex_name")
	descVertexSkew = newFamily("skewscope_vertex_skew_percent",
		"Flink's data skew (FLIP-418 formula) of records/s per subtask of a vertex, computed from observed rates.", "endpoint", "job_id", "vertex_id", "vertex", "job_name", "vertex_name")
	descVertexMaxBusy = newFamily("skewscope_vertex_busy_max_ratio",
		"Highest busy ratio among a vertex's subtasks. Observed.", "endpoint", "job_id", "vertex_id", "vertex", "job_name", "vertex_name")
	descDrift = newFamily("skewscope_source_assignment_drift_partitions",
		"Partitions of a Kafka source whose observed subtask differs from the prediction (fresh start or restore model); 0 when they match.", "endpoint", "job_id", "vertex_id", "vertex", "mode", "job_name", "vertex_name")
	descPartitionWatermarkLag = newFamily("skewscope_source_partition_watermark_lag_seconds",
		"Event-time lag of a partition read by a Flink Kafka source subtask: now − its watermark. kind=observed: the split's own watermark (Flink 2.1+, currentWatermark per split); kind=estimated: the produce time of the last record read (earlier Flink), the watermark being that minus the strategy's bound. Exported for jobs with a watermark strategy, once the partition has a watermark, while Flink's and Kafka's figures are fresh.", "endpoint", "job_id", "vertex_id", "subtask", "cluster", "topic", "partition", "job_name", "vertex_name", "kind")
	descVertexWatermarkLag = newFamily("skewscope_vertex_watermark_lag_seconds",
		"Event-time lag of a vertex: now − the lowest watermark of its subtasks (the input watermark of an operator, the output watermark of a source), computed from Flink's observed watermarks; a source subtask Flink skips as idle is left out. Not exported while the vertex has no watermark yet (Long.MIN_VALUE: see skewscope_job_watermark_holder_info) or Flink's figures are stale.", "endpoint", "job_id", "vertex_id", "vertex", "job_name", "vertex_name")
	descVertexRecords = newFamily("skewscope_vertex_records_per_second",
		"Records per second a vertex's subtasks receive (numRecordsInPerSecond summed); for a source, the records it emits (numRecordsOutPerSecond), as skewscope_vertex_skew_percent counts them. Observed; not exported while stale.", "endpoint", "job_id", "vertex_id", "vertex", "job_name", "vertex_name")
	descStarved = newFamily("skewscope_source_starved_subtasks",
		"Subtasks of a Flink Kafka source that read no partition (observed from their metric ids): they emit no watermark, so without an idle timeout the job's watermark stops. Not exported while an owner is undetermined or Flink's figures are stale.", "endpoint", "job_id", "vertex_id", "vertex", "job_name", "vertex_name")
	descHolder = newFamily("skewscope_job_watermark_holder_info",
		"The source subtask, and its partition, whose watermark is a running job's watermark (the lowest input watermark of its operators), traced upstream through the job's edges; the value is 1. vertex_name is the source; topic and partition are empty for a subtask that reads no partition (cause starved). cause: idle (no new records), starved (reads no partition), paused (watermark alignment), behind (its reader lags), backpressured, aligning (the oldest records, while alignment pauses the partitions ahead of it), oldest (active, simply the oldest records). kind: observed or estimated. Not exported while the holder is not determined or Flink's figures are stale.", "endpoint", "job_id", "job_name", "vertex_id", "vertex_name", "subtask", "topic", "partition", "cause", "kind")
	descGroupLag = newFamily("skewscope_group_partition_lag_records",
		"End offset − committed offset of a consumer group on a partition (Flink's member-less groups included). Observed.", "cluster", "group", "topic", "partition")
	descGroupLagSeconds = newFamily("skewscope_group_partition_lag_seconds",
		"Estimated time lag of a group's commit on a partition.", "cluster", "group", "topic", "partition")
	descUp = newFamily("skewscope_backend_up",
		"1 when the latest poll of a backend succeeded, 0 otherwise.", "kind", "name")
	descState = newFamily("skewscope_backend_state",
		"1 for the state a backend is in, 0 for the others: ok, failing (the latest poll failed after an earlier one succeeded), never reached (no poll ever succeeded) or not yet polled (the first poll has not ended).", "kind", "name", "state")
	descLastPoll = newFamily("skewscope_backend_last_poll_timestamp_seconds",
		"Start time of the latest poll of a backend.", "kind", "name")
	descPollDuration = newFamily("skewscope_backend_poll_duration_seconds",
		"Duration of the latest poll of a backend.", "kind", "name")
	descFlinkRequests = newFamily("skewscope_flink_poll_requests",
		"HTTP requests the latest poll of a Flink endpoint sent.", "name")
	descFlinkBytes = newFamily("skewscope_flink_poll_response_bytes",
		"Response body bytes the latest poll of a Flink endpoint read.", "name")
	descFlinkBackoff = newFamily("skewscope_flink_backoff_polls",
		"Bad polls in a row of a Flink endpoint (failing or slow) while skewscope polls it less often; 0 when not backing off.", "name")
	descWSConnections = newFamily("skewscope_websocket_connections", "Open websocket connections.")
	descWSDropped     = newCounter("skewscope_websocket_dropped_clients_total", "Slow websocket clients dropped.")
	descWSSent        = newCounter("skewscope_websocket_messages_sent_total", "Websocket messages written.")
	descWSRefused     = newCounter("skewscope_websocket_refused_total",
		"Websockets refused or closed by a bound, by reason: handshake (origin, connection bounds), subscribe (a bad or too large subscribe message), topics (distinct views per address or in all), idle (no subscription in time).", "reason")
	descWSInbound = newCounter("skewscope_websocket_inbound_bytes_total", "Bytes of inbound websocket messages read, after decompression.")
	descViews     = newCounter("skewscope_live_views_built_total",
		"Live views (vertex, job, topic and overview) built from the store, for pages, JSON answers and websocket updates; a scrape of /metrics builds none.")
)

// liveMetrics writes the live figures at scrape time, from the store's
// latest State (its MetricFacts, computed once per update) and the hub's
// counters, one family after another: the format wants a family's series
// together.
func (s *Server) liveMetrics(x *exposition) {
	st := s.hub.Stats()
	x.add(descWSConnections, float64(st.Connections))
	x.add(descWSDropped, float64(st.Dropped))
	x.add(descWSSent, float64(st.Sent))
	for _, r := range []struct {
		reason string
		n      uint64
	}{{"handshake", st.Rejected}, {"subscribe", st.BadSubscribers}, {"topics", st.TopicsRefused}, {"idle", st.Unsubscribed}} {
		x.add(descWSRefused, float64(r.n), r.reason)
	}
	x.add(descWSInbound, float64(st.InboundBytes))
	store := s.live
	if store == nil {
		return
	}
	x.add(descViews, float64(store.ViewsBuilt()))
	mf := store.State().MetricFacts()
	backendMetrics(x, &mf)
	for _, e := range mf.Endpoints {
		if e.Age.State != live.StateNotPolled {
			x.add(descFlinkRequests, float64(e.Cost.Requests), e.Name)
		}
	}
	for _, e := range mf.Endpoints {
		if e.Age.State != live.StateNotPolled {
			x.add(descFlinkBytes, float64(e.Cost.Bytes), e.Name)
		}
	}
	for _, e := range mf.Endpoints {
		if e.Age.State != live.StateNotPolled {
			x.add(descFlinkBackoff, float64(e.Budget.BackoffPolls), e.Name)
		}
	}
	for _, g := range mf.GroupLags {
		x.add(descGroupLag, float64(g.Lag), g.Cluster, g.Group, g.Topic, itoa(int(g.Partition)))
	}
	for _, g := range mf.GroupLags {
		if g.LagSecondsKnown {
			x.add(descGroupLagSeconds, g.LagSeconds, g.Cluster, g.Group, g.Topic, itoa(int(g.Partition)))
		}
	}
	for _, l := range mf.SourceLosses {
		x.add(descPartitionLost, float64(l.Records), l.Endpoint, l.Cluster, l.Topic, itoa(int(l.Partition)), l.Job, l.Vertex)
	}
	for _, l := range mf.GroupLosses {
		x.add(descGroupLost, float64(l.Records), l.Cluster, l.Group, l.Topic, itoa(int(l.Partition)))
	}
	vertexMetrics(x, mf.Vertices)
	for _, h := range mf.Holders {
		part := ""
		if h.Topic != "" && h.Partition >= 0 {
			part = itoa(int(h.Partition))
		}
		x.add(descHolder, 1, h.Endpoint, h.JobID, h.JobName, h.VertexID, h.VertexName, itoa(h.Subtask), h.Topic, part, string(h.Cause), string(h.Kind))
	}
}

// itoa formats a subtask or partition number; those below len(smallInts)
// (every subtask and most partitions) cost no allocation.
func itoa(i int) string {
	if i >= 0 && i < len(smallInts) {
		return smallInts[i]
	}
	return strconv.Itoa(i)
}

var smallInts = func() (out [4096]string) {
	for i := range out {
		out[i] = strconv.Itoa(i)
	}
	return out
}()

// vertexMetrics exports the running jobs' vertices: their skew and busiest
// subtask, a source's drift, each subtask's busy ratio and a source's
// partitions (live.State.MetricFacts says which are exported).
func vertexMetrics(x *exposition, vs []live.VertexFact) {
	for i := range vs {
		if v := &vs[i]; v.Skew >= 0 {
			x.add(descVertexSkew, v.Skew, v.Endpoint, v.JobID, v.ID, v.Name, v.JobName, v.Name)
		}
	}
	for i := range vs {
		if v := &vs[i]; v.MaxBusy >= 0 {
			x.add(descVertexMaxBusy, v.MaxBusy, v.Endpoint, v.JobID, v.ID, v.Name, v.JobName, v.Name)
		}
	}
	for i := range vs {
		if v := &vs[i]; v.PredictionMode != "" && v.PredictionMode != live.ModeNone {
			x.add(descDrift, float64(v.Drift), v.Endpoint, v.JobID, v.ID, v.Name, string(v.PredictionMode), v.JobName, v.Name)
		}
	}
	for i := range vs {
		if v := &vs[i]; v.RecordsPerSecond >= 0 {
			x.add(descVertexRecords, v.RecordsPerSecond, v.Endpoint, v.JobID, v.ID, v.Name, v.JobName, v.Name)
		}
	}
	for i := range vs {
		if v := &vs[i]; v.WatermarkLagSeconds >= 0 {
			x.add(descVertexWatermarkLag, v.WatermarkLagSeconds, v.Endpoint, v.JobID, v.ID, v.Name, v.JobName, v.Name)
		}
	}
	for i := range vs {
		if v := &vs[i]; v.Starved >= 0 {
			x.add(descStarved, float64(v.Starved), v.Endpoint, v.JobID, v.ID, v.Name, v.JobName, v.Name)
		}
	}
	for i := range vs {
		v := &vs[i]
		for k, b := range v.Busy {
			if b >= 0 {
				x.add(descSubtaskBusy, b, v.Endpoint, v.JobID, v.ID, itoa(k), v.JobName, v.Name)
			}
		}
	}
	// The four partition families, each over every source's partitions.
	partitions := func(f *family, value func(p *live.PartitionFact) (float64, bool)) {
		for i := range vs {
			v := &vs[i]
			for k := range v.Partitions {
				p := &v.Partitions[k]
				if val, ok := value(p); ok {
					x.add(f, val, v.Endpoint, v.JobID, v.ID, itoa(p.Subtask), v.Cluster, p.Topic, itoa(int(p.Partition)), v.JobName, v.Name)
				}
			}
		}
	}
	partitions(descPartitionLag, func(p *live.PartitionFact) (float64, bool) { return float64(p.Lag), true })
	partitions(descPartitionLagSeconds, func(p *live.PartitionFact) (float64, bool) { return p.LagSeconds, p.LagSecondsKnown })
	partitions(descPartitionTimeToRetention, func(p *live.PartitionFact) (float64, bool) {
		return p.TimeToRetentionSeconds, p.TimeToRetentionSeconds >= 0
	})
	partitions(descPartitionBehindStart, func(p *live.PartitionFact) (float64, bool) { return float64(p.BehindLogStart), p.BehindLogStart >= 0 })
	for i := range vs {
		v := &vs[i]
		for k := range v.Partitions {
			if p := &v.Partitions[k]; p.WatermarkLagSeconds >= 0 {
				x.add(descPartitionWatermarkLag, p.WatermarkLagSeconds, v.Endpoint, v.JobID, v.ID, itoa(p.Subtask), v.Cluster, p.Topic, itoa(int(p.Partition)), v.JobName, v.Name, string(p.WatermarkKind))
			}
		}
	}
}

// backendStates are the values of skewscope_backend_state's state label.
var backendStates = []live.BackendState{live.StateOK, live.StateFailing, live.StateNeverReached, live.StateNotPolled}

// backendMetrics exports each backend's up, state and latest poll; a
// backend whose first poll has not ended has no poll to report.
func backendMetrics(x *exposition, mf *live.MetricFacts) {
	type backend struct {
		kind, name string
		age        live.Age
		pollMillis int64
	}
	var all []backend
	for _, k := range mf.Clusters {
		all = append(all, backend{"kafka", k.Name, k.Age, k.PollMillis})
	}
	for _, e := range mf.Endpoints {
		all = append(all, backend{"flink", e.Name, e.Age, e.PollMillis})
	}
	for _, b := range all {
		up := 1.0
		if b.age.Err != "" || b.age.Stale {
			up = 0
		}
		x.add(descUp, up, b.kind, b.name)
	}
	for _, b := range all {
		for _, st := range backendStates {
			v := 0.0
			if b.age.State == st {
				v = 1
			}
			x.add(descState, v, b.kind, b.name, string(st))
		}
	}
	for _, b := range all {
		if b.age.State != live.StateNotPolled {
			x.add(descLastPoll, float64(b.age.Tried.UnixMilli())/1000, b.kind, b.name)
		}
	}
	for _, b := range all {
		if b.age.State != live.StateNotPolled {
			x.add(descPollDuration, float64(b.pollMillis)/1000, b.kind, b.name)
		}
	}
}

// maxScrapes bounds the scrapes of /metrics served at once; more are
// refused with 503, as Prometheus's client library does.
const maxScrapes = 4

// newMetrics serves /metrics in Prometheus's text format: the Go and
// process collectors and the build info from a registry of their own,
// then the live figures, which skewscope writes itself (metricstext.go):
// a scrape of many jobs costs the writing of their series, not a metric
// object, a sort and an encoding per series.
func (s *Server) newMetrics() http.Handler {
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	reg.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name: "skewscope_build_info", Help: "Build information; the value is 1.",
		ConstLabels: prometheus.Labels{"version": s.version},
	}, func() float64 { return 1 }))
	inFlight := make(chan struct{}, maxScrapes)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case inFlight <- struct{}{}:
			defer func() { <-inFlight }()
		default:
			http.Error(w, fmt.Sprintf("%d scrapes of /metrics are being served; try again", maxScrapes), http.StatusServiceUnavailable)
			return
		}
		mfs, err := reg.Gather()
		if err != nil {
			s.log.Warn("metrics", "error", err)
		}
		w.Header().Set("Content-Type", string(expfmt.NewFormat(expfmt.TypeTextPlain)))
		x := newExposition(w)
		for _, mf := range mfs {
			if _, err := expfmt.MetricFamilyToText(x.w, mf); err != nil {
				s.log.Warn("metrics", "family", mf.GetName(), "error", err)
			}
		}
		s.liveMetrics(x)
		if err := x.flush(); err != nil {
			s.log.Debug("metrics: scrape not written", "error", err)
		}
	})
}
