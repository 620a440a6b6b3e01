package live

import (
	"cmp"
	"slices"
	"time"

	"github.com/skewscope/skewscope/collectors/flink"
	"github.com/skewscope/skewscope/collectors/kafka"
)

// Overview returns the overview: clusters, endpoints, jobs and topics.
func (s *State) Overview() OverviewView {
	s.countView()
	now := s.opts.Now()
	ov := s.backends(now)
	for _, name := range sortedKeys(s.flink) {
		fs := s.flink[name]
		for i := range fs.Jobs {
			jv, _ := s.job(fs, &fs.Jobs[i], now)
			ov.Jobs = append(ov.Jobs, jobSummary(jv))
		}
	}
	sortJobs(ov.Jobs)
	return ov
}

// Backends returns the overview without its jobs: clusters, endpoints and
// topics, which cost no view building.
func (s *State) Backends() OverviewView {
	return s.backends(s.opts.Now())
}

func (s *picture) backends(now time.Time) OverviewView {
	var ov OverviewView
	for _, name := range backendNames(s.opts.Kafka, s.kafka) {
		ks := s.kafka[name]
		if ks == nil {
			ov.Clusters = append(ov.Clusters, ClusterSummary{Name: name, Age: notPolled()})
			continue
		}
		cs := ClusterSummary{Name: name, Topics: len(ks.Topics), Groups: len(ks.Groups), PollMillis: ks.PollDuration.Milliseconds(),
			Age: s.clusterAge(ks, now)}
		groups := map[string]int{} // topic → groups with commits on it
		for _, g := range ks.Groups {
			seen := map[string]bool{}
			for _, gp := range g.Partitions {
				if !seen[gp.Topic] {
					seen[gp.Topic] = true
					groups[gp.Topic]++
				}
			}
		}
		for _, t := range ks.Topics {
			ts := TopicSummary{Cluster: name, Name: t.Name, Partitions: len(t.Partitions), Groups: groups[t.Name], Age: within(topicAge(ks, &t, now), cs.Age)}
			for _, p := range t.Partitions {
				if p.RateOK {
					ts.Rate += p.Rate
				}
			}
			cs.Partitions += ts.Partitions
			cs.Rate += ts.Rate
			ov.Topics = append(ov.Topics, ts)
		}
		ov.Clusters = append(ov.Clusters, cs)
	}
	urls := map[string]string{}
	names := make([]string, len(s.opts.Flink))
	for i, e := range s.opts.Flink {
		names[i], urls[e.Name] = e.Name, e.URL
	}
	for _, name := range backendNames(names, s.flink) {
		fs := s.flink[name]
		if fs == nil {
			ov.Endpoints = append(ov.Endpoints, EndpointSummary{Name: name, URL: urls[name], Age: notPolled()})
			continue
		}
		ov.Endpoints = append(ov.Endpoints, EndpointSummary{Name: name, URL: fs.URL, FlinkVersion: fs.FlinkVersion, Jobs: len(fs.Jobs),
			DroppedJobs: fs.DroppedJobs, MaxJobs: fs.MaxJobs,
			PollMillis: fs.PollDuration.Milliseconds(), Age: s.endpointAge(fs, now),
			Cost: PollCost{Requests: fs.Cost.Requests, Failed: fs.Cost.Failed, Bytes: fs.Cost.Bytes},
			Budget: RequestBudget{MaxInFlight: fs.MaxInFlight, MaxRequestsPerSecond: fs.MaxRequestsPerSecond,
				PauseMillis: fs.Backoff.Pause.Milliseconds(), BackoffPolls: fs.Backoff.Polls, BackoffReason: fs.Backoff.Reason}})
	}
	return ov
}

// endpointAge is the age of a Flink endpoint's data.
func (s *picture) endpointAge(fs *flink.Snapshot, now time.Time) Age {
	good, ok := s.good[backendKey{"flink", fs.Endpoint}]
	return backendAge(good, ok, fs.CollectedAt, now, fs.Err)
}

// notPolled is the age of a configured backend whose first poll has not
// ended: no data, so not fresh.
func notPolled() Age { return Age{Stale: true, State: StateNotPolled} }

// backendNames returns the configured names and those with a snapshot,
// sorted, each once.
func backendNames[S any](configured []string, snaps map[string]S) []string {
	names := slices.Clone(configured)
	for name := range snaps {
		names = append(names, name)
	}
	slices.Sort(names)
	return slices.Compact(names)
}

// jobSummary is a job's line on the overview.
func jobSummary(jv JobView) JobSummary {
	js := JobSummary{Endpoint: jv.Endpoint, ID: jv.ID, Name: jv.Name, State: jv.State, Vertices: len(jv.Vertices), Lag: -1, MaxBusy: -1, Age: jv.Age, Unlisted: jv.Unlisted,
		LagSeconds: -1, LagKind: kafka.TimeLagUnknown, Trend: TrendUnknown}
	for _, v := range jv.Vertices {
		if v.Worst >= 0 && (js.Focus == nil || v.Concern > js.Concern) {
			js.Concern, js.Focus = v.Concern, &Focus{VertexID: v.ID, VertexName: v.Name, Subtask: v.Worst}
		}
		if v.LagKind.Known() && v.LagSeconds > js.LagSeconds {
			js.LagSeconds, js.LagKind, js.Trend = v.LagSeconds, v.LagKind, v.Trend
		}
		if v.Lag >= 0 {
			js.Lag = max(js.Lag, 0) + v.Lag
		}
		js.MaxBusy = max(js.MaxBusy, v.MaxBusy)
		js.Backpressure = worseLevel(js.Backpressure, v.Backpressure)
		js.Drift += v.Drift
		js.WithheldPartitions += v.WithheldPartitions
		js.RecordsLost += v.RecordsLost
		if v.PredictionMode == "none" {
			js.NotModelled++
		}
	}
	js.ReplacedBy = jv.ReplacedBy
	return js
}

// JobRef names a job the store knows.
type JobRef struct {
	Endpoint, ID, Name string
	State              flink.JobState
}

// JobRefs lists the jobs of every endpoint, without building any view.
func (s *State) JobRefs() []JobRef {
	var out []JobRef
	for _, name := range sortedKeys(s.flink) {
		for _, j := range s.flink[name].Jobs {
			out = append(out, JobRef{name, j.ID, j.Name, j.State})
		}
	}
	return out
}

func worseLevel(a, b string) string {
	rank := map[string]int{"": 0, "ok": 1, "low": 2, "high": 3}
	if rank[b] > rank[a] {
		return b
	}
	return a
}

// sortJobs orders the overview's jobs for triage: running and current runs
// first, worst concern first (then most records lost, then furthest
// behind), then the ended runs no later run replaced, then the replaced
// ones, which the page folds under the run that replaced them; ties keep
// the endpoints' and Flink's order.
func sortJobs(jobs []JobSummary) {
	group := func(j *JobSummary) int {
		switch {
		case j.ReplacedBy != nil:
			return 2
		case j.State.GloballyTerminal():
			return 1
		}
		return 0
	}
	slices.SortStableFunc(jobs, func(a, b JobSummary) int {
		return cmp.Or(cmp.Compare(group(&a), group(&b)), cmp.Compare(b.Concern, a.Concern),
			cmp.Compare(b.RecordsLost, a.RecordsLost), cmp.Compare(b.LagSeconds, a.LagSeconds))
	})
}
