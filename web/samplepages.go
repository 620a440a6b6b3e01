package web

import (
	"fmt"
	"math"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/skewscope/skewscope/assign"
	"github.com/skewscope/skewscope/collectors/kafka/sample"
	"github.com/skewscope/skewscope/internal/bidi"
	"github.com/skewscope/skewscope/internal/format"
	"github.com/skewscope/skewscope/internal/quote"
	"github.com/skewscope/skewscope/keysample"
	"github.com/skewscope/skewscope/views"
)

func topicPath(l views.Layout, cluster, topic string) string {
	return l.URL("/kafka/" + url.PathEscape(cluster) + "/topics/" + url.PathEscape(topic))
}

func newSampleFormView(l views.Layout, f *sampleForm, hashed bool) views.SampleFormPage {
	v := views.SampleFormPage{
		ListURL: l.URL("/samples"), Hashed: hashed,
		Action: topicPath(l, f.Cluster, f.Topic) + "/sample", Cluster: f.Cluster, Topic: f.Topic, TopicURL: topicPath(l, f.Cluster, f.Topic),
		Partitions: f.Partitions, LastN: f.LastN, Window: f.Window, Path: f.Path,
		Parallelism: f.Parallelism, Target: f.Target, MaxParallelism: f.MaxParallelism,
		MaxRecords: f.MaxRecords, MaxMegabytes: f.MaxMegabytes, MaxSeconds: f.MaxSeconds, Job: f.Job, Vertex: f.Vertex,
		Errors: f.Errors,
	}
	opts := func(cur string, vl ...string) []views.Option {
		var out []views.Option
		for i := 0; i+1 < len(vl); i += 2 {
			out = append(out, views.Option{Value: vl[i], Label: vl[i+1], Selected: vl[i] == cur})
		}
		return out
	}
	v.Modes = opts(f.Mode, "last", "the last N records of each partition", "live", "records produced in the next window")
	v.Froms = opts(f.From, "key", "the record key", "value", "the record value")
	v.Formats = opts(f.Format, "string", "UTF-8 string (SimpleStringSchema)", "int", "int, 4 bytes big-endian", "long", "long, 8 bytes big-endian",
		"json", "a JSON field (for SQL: Flink's json format)", "csv", "a CSV column (for SQL: Flink's csv format)",
		"raw", "Flink SQL raw format", "avro", "Flink SQL avro format", "avro-confluent", "Flink SQL avro-confluent format")
	v.Types = opts(f.Type, "string", "String", "int", "Integer", "long", "Long", "sql", "Flink SQL key row (table and key columns below)")
	v.SQL, v.Table, v.KeyColumns, v.Schema = f.Type == "sql", f.Table, f.KeyColumns, f.Schema
	return v
}

// newSamplePage builds a sample's page from a snapshot.
func newSamplePage(l views.Layout, snap sampleSnapshot, now time.Time) views.SamplePage {
	f := snap.Form
	pr := snap.Progress
	p := views.SamplePage{
		Live:    views.Live{Topic: sampleTopic(snap.ID), Shape: "running"},
		Cluster: f.Cluster, Topic: f.Topic, TopicURL: topicPath(l, f.Cluster, f.Topic),
		Spec: "key from " + f.spec.String(), Reading: sampleReading(f),
		Running: !snap.Done, CancelAction: l.URL("/samples/" + snap.ID + "/cancel"), Done: snap.Done,
		P: f.p, Target: f.target,
		CSVURL: l.URL("/samples/" + snap.ID + "/keys.csv"), JSONURL: l.URL("/api/v1/samples/" + snap.ID),
		FormURL:   topicPath(l, f.Cluster, f.Topic) + "/sample?" + f.query().Encode(),
		StartedBy: snap.By.String() + " at " + stampText(snap.Started), ListURL: l.URL("/samples"),
		Hashed: snap.Keys == "hashed",
	}
	if c := snap.CancelledBy; c != nil {
		p.CancelledBy = c.String()
	}
	if p.Hashed {
		p.KeysNote = fmt.Sprintf("Keys are shown as keyed hashes (samples.keys = hashed): the first %d hex digits of HMAC-SHA256 under a key drawn when skewscope started, so equal keys have equal hashes until it restarts and the keys cannot be read back. Key groups and subtasks are exact: they come from the real keys.", hashedKeyLen)
	}
	if f.Job != "" && f.Vertex != "" {
		p.VertexURL = l.URL(views.VertexPath(f.Job, f.Vertex))
	}
	if snap.Done {
		p.Shape = "done"
		if p.Target == f.p {
			p.Target = 0
		}
	}
	frac := 0.0
	switch {
	case snap.Done:
		frac = 1
	case pr.Partitions > 0:
		frac = float64(pr.PartitionsDone) / float64(pr.Partitions)
	}
	if lim := f.req.Limits; lim.MaxRecords > 0 {
		frac = max(frac, float64(pr.Records)/float64(lim.MaxRecords))
	}
	if f.req.Mode == "live" && f.req.Window > 0 {
		frac = max(frac, pr.Elapsed.Seconds()/f.req.Window.Seconds())
	}
	p.Progress = views.Meter{Key: "sp", Value: strconv.FormatFloat(min(frac, 1), 'f', 3, 64)}
	status := fmt.Sprintf("%s records, %s, %s", format.Int(pr.Records), format.Bytes(pr.Bytes), format.Seconds(pr.Elapsed.Seconds()))
	if pr.Partitions > 0 {
		status += fmt.Sprintf(", %d of %d partitions done", pr.PartitionsDone, pr.Partitions)
	}
	if pr.Skipped > 0 {
		status += fmt.Sprintf(", %s over the record size limit skipped", format.Int(pr.Skipped))
	}
	p.Status = views.Text{Key: "ss", Text: status}
	if snap.Done {
		p.Ended = endedText(pr, f)
		p.Error = pr.Err
		fillSampleResult(&p, snap, now)
		if f.Job != "" && f.Vertex != "" {
			p.PlannerURL = l.URL(views.VertexPath(f.Job, f.Vertex) + "/plan?sample=" + snap.ID)
		}
	}
	return p
}

func sampleReading(f *sampleForm) string {
	parts := "every partition"
	if len(f.req.Partitions) > 0 {
		ps := make([]string, len(f.req.Partitions))
		for i, n := range f.req.Partitions {
			ps[i] = strconv.Itoa(int(n))
		}
		parts = "partitions " + strings.Join(ps, ", ")
	}
	lim := f.req.Limits
	what := fmt.Sprintf("the last %s records of %s", format.Int(f.req.LastN), parts)
	if f.req.Mode == "live" {
		what = fmt.Sprintf("%s of records produced to %s", format.Seconds(f.req.Window.Seconds()), parts)
	}
	return fmt.Sprintf("%s; at most %s records, %s, %s", what, format.Int(lim.MaxRecords), format.Bytes(lim.MaxBytes), format.Seconds(lim.MaxTime.Seconds()))
}

// endedText says how a sample ended.
func endedText(pr sample.Progress, f *sampleForm) string {
	lim := f.req.Limits
	switch pr.StoppedBy {
	case "complete":
		if f.req.Mode == "live" {
			return "Done: the window ended."
		}
		return "Done: every partition read."
	case "records":
		return fmt.Sprintf("Stopped at the limit of %s records: the sample is partial.", format.Int(lim.MaxRecords))
	case "bytes":
		return fmt.Sprintf("Stopped at the limit of %s: the sample is partial.", format.Bytes(lim.MaxBytes))
	case "time":
		return fmt.Sprintf("Stopped at the time limit of %s: the sample is partial.", format.Seconds(lim.MaxTime.Seconds()))
	case "cancelled":
		return "Cancelled: the sample is partial."
	case "error":
		return "Failed."
	}
	return ""
}

// fillSampleResult adds a finished sample's findings to its page.
func fillSampleResult(p *views.SamplePage, snap sampleSnapshot, now time.Time) {
	f := snap.Form
	n := snap.Records
	for _, s := range snap.Verdict.Sentences {
		p.Verdict = append(p.Verdict, views.KindLine{Kind: "sampled", Text: bidi.Escape(upperFirst(s) + ".")})
	}
	p.Verdict = append(p.Verdict, sqlPhaseLines(snap)...)
	hash := "the key's Java hashCode"
	if f.Type == "sql" {
		hash = "the key row's BinaryRowData.hashCode"
	}
	p.Figures = append(p.Figures,
		views.KindLine{Kind: "observed", Text: fmt.Sprintf("%s records sampled; each one's key group is computed exactly (murmurHash of %s, as KeyGroupRangeAssignment does), so the records per key group and per subtask below are exact for the sample.", format.Int(n), hash)},
		distinctLine(snap),
		views.KindLine{Kind: "estimated", Text: fmt.Sprintf("Key counts come from a summary of %s counters (Space-Saving): each is at most its error bound above the true count (shown when not 0), and every key with more than 1/%s of the records is in it.", format.Int(summaryCounters), format.Int(summaryCounters))},
	)
	for i, k := range snap.Top {
		if i == shownTopKeys {
			break
		}
		row := views.SampleKeyRow{Key: bidi.Escape(k.Text), KeyGroup: strconv.Itoa(k.KeyGroup), Subtask: strconv.Itoa(assign.OperatorIndex(f.maxP, f.p, k.KeyGroup))}
		row.Count = format.Int(k.Count)
		if k.ErrorBound > 0 {
			row.Count += " (≤ " + format.Int(k.ErrorBound) + " over)"
		}
		if n > 0 {
			row.Share = format.Percent(100 * float64(k.Count) / float64(n))
		}
		if f.target > 0 && f.target != f.p {
			row.TargetSubtask = strconv.Itoa(assign.OperatorIndex(f.maxP, f.target, k.KeyGroup))
		}
		if snap.Now != nil && assign.OperatorIndex(f.maxP, f.p, k.KeyGroup) == snap.Now.Busiest {
			row.Hot = true
		}
		p.TopKeys = append(p.TopKeys, row)
	}
	p.Now = subtaskRows(snap.Now)
	if snap.Target != nil {
		p.AtTarget = subtaskRows(snap.Target)
	}
	for _, e := range snap.Errors {
		line := fmt.Sprintf("%s records: %s", format.Int(e.Count), bidi.Escape(e.Message))
		if e.Example != "" && snap.Keys != "hashed" {
			line += " (the first: " + bidi.Escape(quote.Clip(e.Example)) + ")"
		}
		p.Errors = append(p.Errors, line)
	}
	_ = now
}

func subtaskRows(l *keysample.Layout) []views.SampleSubtaskRow {
	if l == nil {
		return nil
	}
	var total, mx int64
	for _, v := range l.PerSubtask {
		total += v
		mx = max(mx, v)
	}
	out := make([]views.SampleSubtaskRow, len(l.PerSubtask))
	for i, v := range l.PerSubtask {
		r := views.SampleSubtaskRow{Subtask: strconv.Itoa(i), Records: format.Int(v), Value: strconv.FormatInt(v, 10), Max: strconv.FormatInt(max(mx, 1), 10), Busiest: i == l.Busiest}
		if total > 0 {
			sh := float64(v) / float64(total)
			r.Share = format.Percent(100 * sh)
			r.Bound = "± " + format.Percent(300*math.Sqrt(sh*(1-sh)/float64(total)))
		}
		out[i] = r
	}
	return out
}

// distinctLine says how many distinct keys the sample holds.
func distinctLine(snap sampleSnapshot) views.KindLine {
	if snap.DistErr == 0 {
		return views.KindLine{Kind: "observed", Text: fmt.Sprintf("%s distinct keys, counted exactly (fewer than the summary's counters).", format.Int(int64(snap.Distinct)))}
	}
	return views.KindLine{Kind: "estimated", Text: fmt.Sprintf("About %s distinct keys (± %s, one standard error; HyperLogLog).", format.Int(int64(snap.Distinct)), format.Int(int64(snap.DistErr)))}
}

// upperFirst capitalises a sentence's first letter.
func upperFirst(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

// stampText is a sample's start time as pages show it.
func stampText(t time.Time) string { return t.UTC().Format("2006-01-02 15:04:05 UTC") }

// newSamplesView builds the list of samples from the API's answer.
func newSamplesView(l views.Layout, resp sampleListResponse, now time.Time) views.SamplesPage {
	v := views.SamplesPage{Bounds: fmt.Sprintf("At most %d run at once, %d per user (or client address when no user is known); %d running.", resp.MaxRunning, resp.MaxPerUser, resp.Running)}
	for _, it := range resp.Samples {
		pr, rq := it.Progress, it.Request
		row := views.SampleListRow{
			URL: l.URL("/samples/" + it.ID), Cluster: it.Cluster, Topic: it.Topic, StartedBy: it.StartedBy, State: it.State,
			Progress: fmt.Sprintf("%s records, %s, %s", format.Int(pr.Records), format.Bytes(pr.Bytes), format.Seconds(pr.ElapsedSeconds)),
			Started:  stampText(it.Started) + " (" + format.Seconds(now.Sub(it.Started).Seconds()) + " ago)",
			Limits:   fmt.Sprintf("%s records, %s, %s", format.Int(rq.Limits.MaxRecords), format.Bytes(rq.Limits.MaxBytes), format.Seconds(rq.Limits.MaxSeconds)),
		}
		if rq.Mode == "live" {
			row.Limits = format.Seconds(rq.WindowSeconds) + " live window; " + row.Limits
		} else {
			row.Limits = "last " + format.Int(rq.LastN) + " per partition; " + row.Limits
		}
		if it.CancelledBy != nil {
			row.State += " by " + *it.CancelledBy
		}
		if it.State == "running" {
			row.CancelAction = l.URL("/samples/" + it.ID + "/cancel?back=list")
		}
		v.Rows = append(v.Rows, row)
	}
	return v
}
