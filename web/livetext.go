package web

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/skewscope/skewscope/collectors/kafka"
	"github.com/skewscope/skewscope/internal/format"
	"github.com/skewscope/skewscope/internal/quote"
	"github.com/skewscope/skewscope/live"
	"github.com/skewscope/skewscope/views"
)

func ageText(a live.Age) string {
	if a.At.IsZero() {
		return "never"
	}
	return format.Seconds(float64(a.Seconds)) + " ago"
}

// backendFigure is a backend's count or rate on the overview: a dash until
// a poll of it has succeeded, since its zeros mean nothing before that.
func backendFigure(a live.Age, text string) string {
	if !a.Reached() {
		return "–"
	}
	return text
}

// pollText is how long a backend's latest poll took, a dash before its
// first ended.
func pollText(a live.Age, ms int64) string {
	if a.State == live.StateNotPolled {
		return "–"
	}
	return format.Millis(ms)
}

// orDash shows an empty text as "–". Like the other text functions here,
// pages and live updates (package web) share it, so both write the same.
func orDash(s string) string {
	if s == "" {
		return "–"
	}
	return s
}

func driftText(n int) string {
	if n == 0 {
		return "as predicted"
	}
	return strconv.Itoa(n) + " partitions differ"
}

func vertexKind(v live.VertexSummary) string {
	var parts []string
	if v.Kafka {
		parts = append(parts, "Kafka source")
	} else if v.Source {
		parts = append(parts, "source")
	}
	if v.Keyed {
		parts = append(parts, "keyed")
	}
	return strings.Join(parts, ", ")
}

// skewText writes Flink's skew percentage, "–" when unknown.
func skewText(x float64) string {
	if x < 0 {
		return format.Unknown
	}
	return format.Percent(math.Round(x))
}

// busiestText writes a vertex's busiest subtask and its busy ratio.
func busiestText(v live.VertexSummary) string {
	if v.Busiest < 0 {
		return "–"
	}
	return "#" + strconv.Itoa(v.Busiest) + " · " + format.Ratio(v.MaxBusy)
}

// vertexDrift is a source vertex's assignment text on the job page.
func vertexDrift(v live.VertexSummary) string {
	if !v.Kafka {
		return ""
	}
	s := driftText(v.Drift)
	switch {
	case v.PredictionMode == live.ModeNone && v.Drift == 0:
		return "not modelled"
	case v.WithheldPartitions > 0 && v.WithheldPartitions == v.Partitions:
		return "prediction only: Flink withheld the readers' metrics"
	case v.PredictionMode == live.ModeInferred:
		s += " (inferred history)"
	}
	if v.WithheldPartitions > 0 {
		s += " · " + strconv.Itoa(v.WithheldPartitions) + " prediction only (metrics withheld)"
	}
	return s
}

// jobDrift is a job's assignment text on the overview. An ended job's
// layout is not compared (its figures are the last Flink reported).
func jobDrift(j live.JobSummary) string {
	switch j.State {
	case "FINISHED", "CANCELED", "FAILED", "SUSPENDED":
		return "not compared: the job has ended"
	}
	if j.NotModelled > 0 && j.Drift == 0 {
		return "not modelled"
	}
	if j.WithheldPartitions > 0 {
		// Those partitions have no observed reader: "as predicted" would
		// vouch for them.
		s := strconv.Itoa(j.WithheldPartitions) + " partitions prediction only (metrics withheld)"
		if j.Drift > 0 {
			s = driftText(j.Drift) + " · " + s
		}
		return s
	}
	return driftText(j.Drift)
}

func joinInts(xs []int) string {
	parts := make([]string, len(xs))
	for i, x := range xs {
		parts[i] = strconv.Itoa(x)
	}
	return strings.Join(parts, ", ")
}

// restartsText is Flink's numRestarts of a job; the adaptive scheduler
// counts its in-place rescales as restarts too.
func restartsText(n int64) string {
	if n == 1 {
		return "1 restart (failovers and in-place rescales)"
	}
	return strconv.FormatInt(n, 10) + " restarts (failovers and in-place rescales)"
}

// restoredText says what a job restored from.
func restoredText(r *live.Restored) string {
	what := "checkpoint " + strconv.FormatInt(r.CheckpointID, 10)
	if r.Savepoint {
		what = "a savepoint"
	}
	if r.Path != "" {
		what += " (" + r.Path + ")"
	}
	return "Restored from " + what + ". After a restore at another parallelism, Flink keeps each partition with the splits it restored, not where a fresh start would put it."
}

// lineageIntro introduces a source's lineage table.
func lineageIntro(l live.LineageView) string {
	s := "Parallelism history " + historyText(l.History)
	if l.Known {
		s += ", from the fresh start, as skewscope saw it."
	} else {
		s += ": skewscope did not see the runs before the first one listed here."
	}
	return s + " Partitions moved are computed by the restore model."
}

// verdictMarks are the marks and words of the partitions' verdicts
// (live.Judge), weakest first: a row shows its weakest, the headline's
// counts all of them, in the same words.
var verdictMarks = []struct {
	verdict     live.Verdict
	mark, words string
	count       func(live.Tally) int
}{
	{live.VerdictDrift, "✗", "not as predicted", func(t live.Tally) int { return t.Drift }},
	{live.VerdictUndetermined, "~", "reader not determined", func(t live.Tally) int { return t.Undetermined }},
	{live.VerdictWithheld, "–", "prediction only (metrics withheld)", func(t live.Tally) int { return t.Withheld }},
	{live.VerdictNotGuessed, "~", "not as guessed (uncertain)", func(t live.Tally) int { return t.NotGuessed }},
	{live.VerdictNotModelled, "–", "not modelled", func(t live.Tally) int { return t.NotModelled }},
	{live.VerdictGuessed, "≈", "as guessed (uncertain)", func(t live.Tally) int { return t.Guessed }},
	{live.VerdictMatch, "✓", "as predicted", func(t live.Tally) int { return t.Match }},
}

// headlineCounts lists the headline's verdicts, in the rows' words:
// "Cells: 16 as predicted · 2 reader not determined".
func headlineCounts(h live.Headline) string {
	var parts []string
	for i := len(verdictMarks) - 1; i >= 0; i-- {
		if n := verdictMarks[i].count(h.Verdicts); n > 0 {
			parts = append(parts, strconv.Itoa(n)+" "+verdictMarks[i].words)
		}
	}
	if len(parts) == 0 {
		return "no partitions"
	}
	return "Cells: " + strings.Join(parts, " · ")
}

func shortID(id string) string {
	if len(id) > 8 {
		return id[:8] + "…"
	}
	return id
}

// eventFrom says what a lineage event restored from.
func eventFrom(e live.LineageEvent) string {
	switch {
	case e.Savepoint && e.Path != "":
		return "savepoint " + e.Path
	case e.Savepoint:
		return "savepoint " + strconv.FormatInt(e.CheckpointID, 10)
	case e.CheckpointID > 0:
		return "checkpoint " + strconv.FormatInt(e.CheckpointID, 10)
	case e.Kind == live.EventRescale || e.Kind == live.EventRestore || e.Kind == live.EventFailover || e.Kind == live.EventRescaleElsewhere || e.Kind == live.EventFirstSeen:
		return "not named by Flink"
	}
	return "–"
}

// eventMoved says which partitions a lineage event moved.
func eventMoved(e live.LineageEvent) string {
	switch {
	case e.Kind != live.EventRestore && e.Kind != live.EventRescale:
		return "–"
	case e.MovedCount < 0:
		return "not determined"
	case e.MovedCount == 0:
		return "none"
	}
	moved := make([]string, len(e.Moved))
	for i, m := range e.Moved {
		moved[i] = views.Isolate(m) // topic-partition: the topic name is Kafka's
	}
	s := strconv.Itoa(e.MovedCount) + ": " + strings.Join(moved, ", ")
	if len(e.Moved) < e.MovedCount {
		s += ", …"
	}
	return s
}

func historyText(h []int) string {
	parts := make([]string, len(h))
	for i, p := range h {
		parts[i] = strconv.Itoa(p)
	}
	return strings.Join(parts, " → ")
}

// cellText is the text of a partition cell: its lag, its rate, or its
// event-time lag ("none" before its first watermark, "–" without event
// time).
func cellText(v live.VertexView, c live.PartitionCell) string {
	switch v.Color {
	case "rate":
		return format.Count(c.Rate)
	case "watermark":
		switch et := c.EventTime; {
		case et == nil:
			return format.Unknown
		case et.None:
			return "none"
		}
		return format.Seconds(max(c.EventTime.LagSeconds, 0))
	}
	return format.Count(float64(c.Lag))
}

// cellTitle is a partition cell's title: the partition, its prediction,
// and how its reader does (state, records deleted unread, time to catch
// up), which updates rewrite.
func cellTitle(c live.PartitionCell, subtask int) string {
	var b strings.Builder
	b.WriteString(views.Isolate(c.Topic) + "-" + strconv.Itoa(int(c.Partition)))
	switch {
	case c.Predicted < 0:
		b.WriteString(" · not modelled")
	case c.Predicted == subtask:
		b.WriteString(" · predicted here")
	default:
		b.WriteString(" · predicted on subtask " + strconv.Itoa(c.Predicted))
	}
	switch {
	case c.Withheld:
		b.WriteString(" · Flink withheld its reader's metrics: prediction only")
	case c.OwnerUndetermined && len(c.Candidates) == 0:
		b.WriteString(" · Flink's metric ids predate the latest restart: reader not determined yet")
	case c.OwnerUndetermined:
		b.WriteString(" · listed under subtasks " + joinInts(c.Candidates) + " in Flink's metric ids: reader not determined")
	case c.Uncertain:
		b.WriteString(" (owner not determined by Flink's deterministic rules)")
	}
	return b.String()
}

// cellReading is the live part of a partition cell's title: its reader's
// state, the records it lost and when it catches up; "" for a quiet cell
// (ok, caught up or unknown, with no estimate to give), whose title is
// then the static one. Cells are many: a quiet cell's update carries no
// title.
//
// A partition's event time (its watermark and state) is part of the
// reading when the grid is coloured by it, or when the partition is not
// simply active: idle, paused by alignment or backpressured.
func cellReading(c live.PartitionCell, byWatermark bool) string {
	rd := c.Reading
	et := ""
	if e := c.EventTime; e != nil && (byWatermark || e.State != live.PartitionActive) {
		et = partitionEventTimeText(e)
	}
	quiet := rd.State == live.ReaderOK || rd.State == live.ReaderCaughtUp || rd.State == live.ReaderUnknown
	if quiet && (rd.Lost == nil || (rd.Lost.Records == 0 && rd.Lost.Behind == 0)) && rd.CatchUp != live.CatchUpETA && rd.CatchUp != live.CatchUpNever {
		return et
	}
	var b strings.Builder
	if et != "" {
		b.WriteString(et + " · ")
	}
	b.WriteString(readerStateLabel(rd.State))
	if l := rd.Lost; l != nil {
		if l.Records > 0 {
			b.WriteString(" · ≈ " + format.Int(l.Records) + " records deleted unread " + format.Between(l.FirstSeen, l.LastSeen) + " (observed)")
		}
		if l.Behind > 0 {
			b.WriteString(" · " + format.Int(l.Behind) + " records below the log start now")
		}
	}
	if rd.State == live.ReaderLost && rd.CatchUp == live.CatchUpUnknown {
		b.WriteString(" · catch up: not estimated while records are deleted unread")
	} else {
		b.WriteString(" · catch up: " + catchUpText(rd.CatchUp, rd.CatchUpSeconds, rd.Trend) + " (estimated)")
	}
	return b.String()
}

// readerStateLabel is a reader state as pages name it: "lag growing" for
// live.ReaderWarning, "caught up" for live.ReaderCaughtUp, the state
// otherwise.
func readerStateLabel(state live.ReaderState) string {
	switch state {
	case live.ReaderWarning:
		return "lag growing"
	case live.ReaderCaughtUp:
		return "caught up"
	}
	return string(state)
}

// stateClass is the class of a reader state. A grid asks it for each of
// thousands of cells: the known states' classes are made once.
func stateClass(state live.ReaderState) string {
	if c, ok := stateClasses[state]; ok {
		return c
	}
	return "st-" + string(state)
}

var stateClasses = func() map[live.ReaderState]string {
	m := map[live.ReaderState]string{}
	for _, st := range []live.ReaderState{live.ReaderOK, live.ReaderCaughtUp, live.ReaderWarning, live.ReaderStalled,
		live.ReaderStopped, live.ReaderRewind, live.ReaderLost, live.ReaderUnknown} {
		m[st] = "st-" + string(st)
	}
	return m
}()

// catchUpText says when a reader catches up at its rates: "≈ 3 m 20 s",
// "never at this rate", "keeps pace" (within 2 %, so never either),
// "caught up", with the lag's trend when it grows or shrinks.
func catchUpText(kind live.CatchUp, seconds float64, trend live.Trend) string {
	var s string
	switch kind {
	case live.CatchUpCaughtUp:
		return "caught up"
	case live.CatchUpETA:
		s = "≈ " + format.Seconds(seconds)
	case live.CatchUpNever:
		s = "never at this rate"
	case live.CatchUpSteady:
		s = "keeps pace"
	default:
		return "–"
	}
	if trend == live.TrendGrowing || trend == live.TrendShrinking {
		s += " · " + string(trend)
	}
	return s
}

// lostCount is the records a job or vertex lost (deleted unread): "≈ 2,200",
// "0"; "–" when it has no Kafka source to lose any.
func lostCount(n int64, kafka bool) string {
	switch {
	case n > 0:
		return "≈ " + format.Int(n)
	case !kafka:
		return "–"
	}
	return "0"
}

// lostNote is a subtask's or group's records deleted unread, "" when none.
func lostNote(n int64) string {
	if n <= 0 {
		return ""
	}
	return "≈ " + format.Int(n) + " deleted unread"
}

// statesText counts partitions by reader state: "1 lost · 11 ok".
func statesText(sc []live.StateCount) string {
	parts := make([]string, len(sc))
	for i, c := range sc {
		parts[i] = strconv.Itoa(c.Count) + " " + readerStateLabel(c.State)
	}
	return strings.Join(parts, " · ")
}

// readerText is how a group's commits do on a partition: its state, and
// what it lost.
func readerText(r live.Reading) string {
	s := readerStateLabel(r.State)
	if l := r.Lost; l != nil && l.Records > 0 {
		s += " · ≈ " + format.Int(l.Records) + " deleted unread " + format.Between(l.FirstSeen, l.LastSeen)
	}
	return s
}

// lagTime is a row's lag in time, "–" when its lag is unknown, "≥" when
// its worst partition's is a lower bound.
func lagTime(r live.SubtaskRow) string {
	if r.Lag < 0 {
		return "–"
	}
	if r.LagKind == kafka.TimeLagAtLeast {
		return "≥ " + format.Seconds(r.LagSeconds)
	}
	return format.Seconds(r.LagSeconds)
}

// meterValue is a meter's value attribute (0 when unknown).
func meterValue(x float64) string {
	if x < 0 {
		return "0"
	}
	return strconv.FormatFloat(x, 'f', 3, 64)
}

// rowVs is the "vs prediction" text of a row: the weakest verdict (live.Judge)
// of the cells it shows, with their count, in the headline's words.
func rowVs(v live.VertexView, r live.SubtaskRow) string {
	if v.Prediction == nil || v.Prediction.Mode == live.ModeNone {
		return "not modelled"
	}
	t := live.TallyOf(r.Partitions, r.Subtask)
	for _, m := range verdictMarks {
		n := m.count(t)
		switch {
		case n == 0:
			continue
		case m.verdict == live.VerdictMatch:
			return m.mark + " " + m.words
		case m.verdict == live.VerdictNotModelled && n == len(r.Partitions):
			return m.words
		}
		return m.mark + " " + strconv.Itoa(n) + " " + m.words
	}
	return "✓ as predicted" // no partition: none is elsewhere than predicted
}

// groupLagTime is a group's lag in time on a partition.
func groupLagTime(g live.GroupOffset) string {
	switch g.LagKind {
	case kafka.TimeLagUnknown:
		return "–"
	case kafka.TimeLagAtLeast:
		return "≥ " + format.Seconds(g.LagSeconds)
	}
	return format.Seconds(g.LagSeconds)
}

// kgPct is a key-group offset or width as a percentage of the strip.
func kgPct(n, maxP int) string {
	return strconv.FormatFloat(100*float64(n)/float64(maxP), 'f', 3, 64) + "%"
}

// endpointCost is what an endpoint's latest poll asked of the JobManager:
// "412 requests, 1.2 MB" (and how many failed).
func endpointCost(e live.EndpointSummary) string {
	if e.Cost.Requests == 0 {
		return "–"
	}
	s := format.Int(e.Cost.Requests) + " requests, " + format.Bytes(e.Cost.Bytes)
	if e.Cost.Failed > 0 {
		s += ", " + format.Int(e.Cost.Failed) + " failed"
	}
	return s
}

// endpointBudget is skewscope's request budget on the endpoint: "4 in
// flight, 50/s".
func endpointBudget(e live.EndpointSummary) string {
	b := e.Budget
	if b.MaxInFlight == 0 {
		return "–"
	}
	return strconv.Itoa(b.MaxInFlight) + " in flight, " + format.Rate(b.MaxRequestsPerSecond)
}

// endpointBackoff says, while skewscope backs off an endpoint, why and how
// far apart its polls are: "backing off after 2 slow polls: polls 40 s
// apart"; "" otherwise.
func endpointBackoff(e live.EndpointSummary) string {
	b := e.Budget
	if b.BackoffPolls == 0 {
		return ""
	}
	polls := "polls"
	if b.BackoffPolls == 1 {
		polls = "poll"
	}
	return "backing off after " + strconv.Itoa(b.BackoffPolls) + " " + b.BackoffReason + " " + polls +
		": polls " + format.Seconds(float64(b.PauseMillis)/1000) + " apart"
}

func verdictClass(kind live.Basis) string {
	return "v-" + strings.ReplaceAll(string(kind), " ", "-")
}

// droppedJobs says how many finished jobs an endpoint's list holds beyond
// maxJobs; "" when none.
func droppedJobs(n, maxJobs int) string {
	switch {
	case n <= 0:
		return ""
	case n == 1:
		return "1 finished job not shown: more than maxJobs (" + strconv.Itoa(maxJobs) + ")"
	}
	return format.Int(int64(n)) + " finished jobs not shown: more than maxJobs (" + strconv.Itoa(maxJobs) + ")"
}

// unlistedText says that the latest job lists left a job out; "" when
// listed.
func unlistedText(polls int) string {
	switch {
	case polls <= 0:
		return ""
	case polls == 1:
		return "not listed in the last poll"
	}
	return "not listed in the last " + strconv.Itoa(polls) + " polls"
}

// predictionSummary is a prediction in one sentence: why it is not
// modelled, or its headline.
func predictionSummary(pr live.Prediction, w *live.Withheld) string {
	n := pr.NotModelled
	if n == nil {
		return headlineText(pr, w)
	}
	switch n.Reason {
	case live.ReasonNotRunning:
		return fmt.Sprintf("The job is %s: skewscope compares the layouts of running jobs only; the partitions shown are the last its metrics listed.", strings.ToLower(string(n.JobState)))
	case live.ReasonRescaling:
		return fmt.Sprintf("Changing parallelism from %d to %d: not every subtask runs yet, so the layout is compared once they all do.", n.From, n.To)
	case live.ReasonRestoredUnseen:
		what := "a checkpoint"
		if n.Savepoint {
			what = "a savepoint"
		}
		s := "Restored from " + what + " before skewscope first saw it: the layout depends on the parallelisms the job ran at before."
		if n.Inference != nil {
			s += " " + inferenceText(n.Inference)
		}
		return s + " The observed layout is shown; add ?history=P0,P1,… (parallelisms from the fresh start on) to model it."
	case live.ReasonUnnamedTopics:
		return fmt.Sprintf("Not modelled: without Kafka metadata the real name of %s is not known (Flink's metric ids write '.' as '_'), and after a restore every owner depends on it. Configure the Kafka cluster of this Flink endpoint.", topicList(n.Topics))
	case live.ReasonModelError:
		if n.Restore {
			return "the restore model could not run: " + n.Error
		}
		return "no prediction: " + n.Error
	}
	return headlineText(pr, w)
}

// topicList names topics for a sentence: "topic a", "topics a, b".
func topicList(names []string) string {
	out := make([]string, len(names))
	for i, n := range names {
		out[i] = quote.Clip(n)
	}
	if len(out) == 1 {
		return "topic " + out[0]
	}
	return "topics " + strings.Join(out, ", ")
}

// headlineText says a prediction's verdict, in the counts of the cells'
// verdicts that the rows show. w is the source's note when Flink withheld
// reader metrics, nil otherwise.
func headlineText(pr live.Prediction, w *live.Withheld) string {
	h := pr.Headline
	total := h.Exact + h.Inferred + h.Uncertain + h.NotModelled
	if h.Kind == live.BasisNotModelled {
		if total > 0 && pr.Mode != live.ModeNone {
			return fmt.Sprintf("not modelled: %d partitions", total)
		}
		return "not modelled"
	}
	hist := ""
	if len(pr.History) > 1 {
		hist = " for " + joinIntsBy(pr.History, "→")
	}
	model := "a fresh start"
	switch pr.Mode {
	case live.ModeRestore:
		model = "the restore model" + hist
	case live.ModeInferred:
		model = "the restore model" + hist + " (inferred history)"
	}
	unsettled := pr.Missing > 0 || pr.UnknownToKafka > 0
	v := h.Verdicts
	var s string
	switch {
	case total > 0 && v.Withheld == total:
		// No observed reader at all: nothing is matched or undetermined.
		s = fmt.Sprintf("prediction only: %s of %d %s (%s); %s shown where %s puts them, not where Flink reports them",
			withheldWhat(w), total, plural(total, "partition", "partitions"), withheldCause(w), plural(total, "it is", "they are"), model)
	case v.Drift > 0 && pr.Mode == live.ModeFresh:
		s = fmt.Sprintf("%d of %d partitions are not where a fresh start puts them. Usual causes: the job was restored from a checkpoint or savepoint taken at another parallelism (Flink keeps restored splits where they are), or the source is not a KafkaSource.", v.Drift, total) + withheldClause(v.Withheld, w)
	case v.Drift > 0:
		s = fmt.Sprintf("%d of %d partitions differ from %s.", v.Drift, total, model) + withheldClause(v.Withheld, w)
	case v.Match == total && unsettled:
		s = fmt.Sprintf("the %d partitions shown are where %s puts them", total, model)
	case v.Match == total:
		s = fmt.Sprintf("all %d partitions are where %s puts them", total, model)
	default:
		s = fmt.Sprintf("%d of %d partitions are where %s puts them", v.Placed(), total, model)
		switch {
		case v.Guessed > 0 && v.Guessed == v.Placed():
			s += ", as its best guess: the model cannot place them exactly"
		case v.Guessed > 0:
			s += fmt.Sprintf(", %d of them as its best guess (the model cannot place those exactly)", v.Guessed)
		}
		for _, o := range []struct {
			n    int
			what string
		}{
			{v.NotGuessed, "elsewhere than its best guess (not counted as drift)"},
			{v.Undetermined, "whose reader Flink's metric ids do not determine yet"},
			{v.NotModelled, "not modelled"},
		} {
			if o.n > 0 {
				s += fmt.Sprintf("; %d %s", o.n, o.what)
			}
		}
		s += withheldClause(v.Withheld, w)
	}
	return s + gapText(pr)
}

// withheldWhat says what Flink did not report of a source's readers, for
// "… of n partitions".
func withheldWhat(w *live.Withheld) string {
	if w != nil && w.Cause == live.CauseNotYetListed {
		return "Flink lists no reader metrics yet"
	}
	return "Flink withheld the readers' metrics"
}

// withheldCause says in a few words why the readers' metrics are missing
// and, where known, which subtasks and which setting.
func withheldCause(w *live.Withheld) string {
	if w == nil {
		return "cause not known"
	}
	out := ""
	if !w.All && len(w.Subtasks) > 0 {
		out = subtaskList(w.Subtasks) + ": "
	}
	switch w.Cause {
	case live.CauseMetricDumpLimit:
		out += "a TaskManager metric dump over " + w.Setting
	case live.CauseNotYetListed:
		out += "readers started less than " + live.JustStartedFor.String() + " ago; " + w.Setting
	case live.CauseNoValues:
		out += "listed but no values returned; REST does not say why: a TaskManager metric dump now over " + w.Setting + ", or a TaskManager lost"
	default:
		out += w.Cause
	}
	return out
}

// withheldText is the note of a source whose reader metrics Flink
// withheld: what is missing, why, the setting, and that the page shows
// the prediction alone. parallelism is the source's.
func withheldText(w *live.Withheld, parallelism int) string {
	n, topics := format.Int(int64(w.Missing)), withheldTopics(w.Topics)
	const alone = "What follows is the prediction alone, computed from the topics' partitions and the parallelism, not what Flink reports."
	const rest = ". REST does not say why: a TaskManager whose metric dump now exceeds the RPC frame size (%s) keeps its metric ids listed without sending their values, and so does a TaskManager lost. "
	subtasks := strconv.Itoa(parallelism) + " " + plural(parallelism, "subtask", "subtasks")
	switch {
	case w.All && w.Cause == live.CauseNoValues:
		return fmt.Sprintf("Flink lists this source's KafkaSourceReader offset metrics, but returned no value for any of them (listed but no values returned), for the %s partitions of %s"+rest+alone,
			n, topics, w.Setting)
	case w.All && w.Cause == live.CauseNotYetListed:
		return fmt.Sprintf("Flink lists none of this source's KafkaSourceReader offset metrics yet, for any of the %s partitions of %s: "+
			"%s, and the JobManager fetches the TaskManagers' metrics only when asked, at most once per %s. "+alone,
			n, topics, pendingText(w.Pending), w.Setting)
	case w.All:
		return fmt.Sprintf("Flink lists none of this source's KafkaSourceReader offset metrics, for any of the %s partitions of %s: "+
			"a TaskManager whose metric dump exceeds the RPC frame size drops its gauges whole (its log says \"Some metrics will not be reported as the metric dump would exceed the maximum size\"). "+
			"The limit is %s, set on the JobManager and the TaskManagers; raise it, or register fewer metrics (register.consumer.metrics=false on the source). "+alone,
			n, topics, w.Setting)
	case w.Cause == live.CauseNoValues:
		var unreported []int
		for _, st := range w.Subtasks {
			if !slices.Contains(w.Unlisted, st) {
				unreported = append(unreported, st)
			}
		}
		s := fmt.Sprintf("Flink lists the KafkaSourceReader offset metrics of %s of %s, but returned no value for them (listed but no values returned)", subtaskList(unreported), subtasks)
		if len(w.Unlisted) > 0 {
			s += ", and " + subtaskList(w.Unlisted) + " list none"
		}
		return s + fmt.Sprintf(rest+"The %s partitions of %s no reported metric names are shown where the model puts them, the prediction alone.", w.Setting, n, topics)
	}
	return fmt.Sprintf("%s of %s list no KafkaSourceReader offset metric, and no listed metric names %s of the partitions of %s: "+
		"their TaskManagers' gauges are missing, as when a metric dump exceeds the RPC frame size (%s). "+
		"Those partitions are shown where the model puts them, the prediction alone.",
		subtaskList(w.Subtasks), subtasks, n, topics, w.Setting)
}

// pendingText says why the JobManager may not have fetched a source's
// reader metrics yet, for the not-yet-listed note.
func pendingText(p live.Pending) string {
	if p == live.PendingFirstPoll {
		return "skewscope started asking this JobManager for metrics less than " + live.JustStartedFor.String() + " ago"
	}
	return "its readers started less than " + live.JustStartedFor.String() + " ago"
}

// withheldTopics names a withheld source's topics for its note, the first
// five of them, each isolated: the names are Kafka's.
func withheldTopics(names []string) string {
	out := make([]string, 0, min(len(names), 5))
	for _, n := range names[:min(len(names), 5)] {
		out = append(out, views.Isolate(n))
	}
	s := strings.Join(out, ", ")
	if len(names) > 5 {
		s += fmt.Sprintf(" and %d more topics", len(names)-5)
	}
	return s
}

// withheldClause is the headline's part on the n partitions whose readers'
// metrics Flink withheld, "" when none.
func withheldClause(n int, w *live.Withheld) string {
	if n == 0 {
		return ""
	}
	return fmt.Sprintf("; %d prediction only: %s of %s (%s)", n, withheldWhat(w), plural(n, "its reader", "their readers"), withheldCause(w))
}

// gapText says how the partition set is unsettled, "" when it is not.
func gapText(pr live.Prediction) string {
	out := ""
	if pr.Missing > 0 {
		out += fmt.Sprintf("; may be missing %d %s: Kafka lists %s that no metric id of this source names yet", pr.Missing, plural(pr.Missing, "partition", "partitions"), plural(pr.Missing, "it", "them"))
	}
	if pr.UnknownToKafka > 0 {
		out += fmt.Sprintf("; Kafka's metadata does not list %d %s the metric ids name (a topic created or grown since it was read, or one the cluster does not watch)", pr.UnknownToKafka, plural(pr.UnknownToKafka, "partition", "partitions"))
	}
	return out
}

// subtaskList names subtasks, the first eight of them.
func subtaskList(ss []int) string {
	parts := make([]string, 0, min(len(ss), 8))
	for i, n := range ss {
		if i == 8 {
			return "subtasks " + strings.Join(parts, ", ") + fmt.Sprintf(" and %d more", len(ss)-8)
		}
		parts = append(parts, strconv.Itoa(n))
	}
	if len(ss) == 1 {
		return "subtask " + parts[0]
	}
	return "subtasks " + strings.Join(parts, ", ")
}

func joinIntsBy(xs []int, sep string) string {
	parts := make([]string, len(xs))
	for i, x := range xs {
		parts[i] = strconv.Itoa(x)
	}
	return strings.Join(parts, sep)
}

// historySource says where a prediction's history came from; l is the
// source's lineage, whose start, restore and rescale events a history
// skewscope followed is made of.
func historySource(pr live.Prediction, l *live.LineageView) string {
	switch pr.HistoryFrom {
	case live.HistoryFromURL:
		return "from the URL (?history=)"
	case live.HistoryInferred:
		return "inferred from the observed layout"
	}
	var steps []string
	if l != nil {
		for _, e := range l.Events {
			if e.Kind == live.EventRestore || e.Kind == live.EventRescale || e.Kind == live.EventStart {
				steps = append(steps, eventText(e))
			}
		}
	}
	if len(steps) == 0 {
		return "observed by skewscope"
	}
	return "observed by skewscope: " + strings.Join(steps, "; ")
}

// eventText says a lineage event in words.
func eventText(e live.LineageEvent) string {
	from := "?"
	if e.From > 0 {
		from = strconv.Itoa(e.From)
	}
	switch e.Kind {
	case live.EventStart:
		return fmt.Sprintf("fresh start at p=%d", e.To)
	case live.EventFirstSeen:
		return fmt.Sprintf("first seen at p=%d, already restored: earlier parallelisms not seen", e.To)
	case live.EventRestore:
		return fmt.Sprintf("restored under a new job id, p %s→%d", from, e.To)
	case live.EventRescale:
		return fmt.Sprintf("rescaled in place, p %s→%d", from, e.To)
	case live.EventFailover:
		return fmt.Sprintf("failover at p=%d: restarted from its checkpoint, layout unchanged", e.To)
	case live.EventRescaleElsewhere:
		parts := make([]string, 0, len(e.Rescaled))
		for _, r := range e.Rescaled {
			parts = append(parts, fmt.Sprintf("%s %d→%d", r.Name, r.From, r.To))
		}
		return fmt.Sprintf("restarted at p=%d from its checkpoint because the job rescaled %s in place; layout unchanged", e.To, strings.Join(parts, ", "))
	case live.EventPartitions:
		if e.NewPartitions == 1 {
			return fmt.Sprintf("1 new partition discovered at p=%d", e.To)
		}
		return fmt.Sprintf("%d new partitions discovered at p=%d", e.NewPartitions, e.To)
	}
	return string(e.Kind)
}

// causeText is a failover's root cause in a line: the exception and its
// message, where it happened, and the failure's labels.
func causeText(c *live.FailureCause) string {
	if c == nil || c.Class == "" {
		return ""
	}
	var b strings.Builder
	b.WriteString("Root cause: " + views.Isolate(c.Class))
	if c.Message != "" {
		b.WriteString(": " + views.Isolate(c.Message))
	}
	if c.Cause != "" {
		b.WriteString(", caused by " + views.Isolate(c.Cause))
	}
	// Flink names the failed task in most failures; the adaptive
	// scheduler's history names none even for a task's failure, so a
	// missing name says nothing of where it happened.
	switch {
	case c.Task != "" && c.Subtask >= 0:
		fmt.Fprintf(&b, ", in %s subtask %d", views.Isolate(c.Task), c.Subtask)
	case c.Task != "":
		b.WriteString(", in " + views.Isolate(c.Task))
	}
	if c.Endpoint != "" {
		b.WriteString(" on " + views.Isolate(c.Endpoint))
	}
	if !c.At.IsZero() {
		b.WriteString(" at " + c.At.UTC().Format("15:04:05Z"))
	}
	if c.Concurrent > 0 {
		fmt.Fprintf(&b, " (%s at the same time)", plural(c.Concurrent, "1 other failure", strconv.Itoa(c.Concurrent)+" other failures"))
	}
	if len(c.Labels) > 0 {
		parts := make([]string, len(c.Labels))
		for i, l := range c.Labels {
			parts[i] = views.Isolate(l.Key) + "=" + views.Isolate(l.Value)
		}
		b.WriteString("; labels " + strings.Join(parts, ", "))
	}
	b.WriteString(".")
	return b.String()
}

// checkpointOf names the checkpoint of a vertex's state and checkpoint
// columns, with its age: "checkpoint 42, completed 5 s ago".
func checkpointOf(c *live.VertexCheckpoint) string {
	if c == nil {
		return "no checkpoint read"
	}
	s := "checkpoint " + strconv.FormatInt(c.ID, 10)
	if c.Age.Stale {
		s += ", read " + format.Seconds(float64(c.Age.Seconds)) + " ago (a newer one could not be read)"
	} else if !c.CompletedAt.IsZero() && !c.Age.At.IsZero() {
		s += ", completed " + format.Seconds(max(0, c.Age.At.Sub(c.CompletedAt).Seconds())+float64(c.Age.Seconds)) + " ago"
	}
	return s
}

// inferenceText says what the search for a restored source's history
// found, and so whether the page models the history it inferred.
func inferenceText(in *live.Inference) string {
	switch in.Outcome {
	case live.InferTooLarge:
		return fmt.Sprintf("No history is inferred for %d partitions: the search is bounded to %d so that it stays within a poll.", in.Observed, in.Limit)
	case live.InferFailed:
		return "No history could be inferred: " + in.Error + "."
	}
	scope := fmt.Sprintf("of ≤ %d restores with earlier parallelisms up to %d", in.Steps, in.Bound)
	if in.Steps == 1 {
		scope = fmt.Sprintf("of one restore from a parallelism up to %d", in.Bound)
	}
	if len(in.Tail) > 1 {
		scope += " ending with the parallelisms skewscope saw, " + joinIntsBy(in.Tail, "→") + ","
	}
	switch {
	case len(in.Fits) == 0:
		return fmt.Sprintf("No history %s reproduces the observed layout (%d partitions compared), so skewscope does not guess one.", scope, in.Observed)
	case in.Outcome == live.InferOne:
		return fmt.Sprintf("Inferred, not witnessed: the observed layout is consistent with %s, the only history %s that reproduces it.", historyWords(in.Fits[0]), scope)
	}
	alts := make([]string, len(in.Fits))
	for i, f := range in.Fits {
		alts[i] = joinIntsBy(f, "→")
	}
	more := ""
	if in.More {
		more = " and more"
	}
	return fmt.Sprintf("Inferred, not witnessed: several histories %s reproduce the observed layout: %s%s. The page models %s; they all place every observed partition alike, and may differ on partitions discovered later.", scope, strings.Join(alts, ", "), more, joinIntsBy(in.Fits[0], "→"))
}

// historyWords says an inferred history: the fresh start, the restore or
// the restores it is made of.
func historyWords(h []int) string {
	switch len(h) {
	case 1:
		return fmt.Sprintf("a fresh start at p=%d (or restores that kept the parallelism)", h[0])
	case 2:
		return fmt.Sprintf("a restore from p=%d", h[0])
	}
	return "restores through p=" + joinIntsBy(h[:len(h)-1], ", p=")
}

// noteText says a prediction's note.
func noteText(n live.Note) string {
	switch n.Kind {
	case live.NoteInferred:
		if n.Inference != nil {
			return inferenceText(n.Inference)
		}
	case live.NoteFreshOffsets:
		return fmt.Sprintf("Assumes the fresh start at parallelism %d read the partitions it had then from the earliest offsets (the KafkaSourceBuilder default; skewscope cannot see a source's OffsetsInitializer).", n.P)
	case live.NoteUnsureDiscovery:
		return fmt.Sprintf("%s appeared after the latest restore or rescale, and no Kafka metadata read between the restore and their first sight says whether the source discovered them before it (at p=%d, so that the restore dealt them out) or after it (at p=%d, by the hash rule): their cells, and those whose owner depends on it, are uncertain, not drift.",
			countOf(n.Partitions, "partition", "partitions"), n.From, n.To)
	case live.NoteDiscoverySettled:
		what := fmt.Sprintf("the %d new partitions were", n.Partitions)
		if n.Partitions == 1 {
			what = "the new partition was"
		}
		step := "restore or rescale"
		switch n.Step {
		case live.EventRescale:
			step = "rescale"
		case live.EventRestore:
			step = "restore"
		}
		if n.Before {
			return fmt.Sprintf("The observed readers show %s discovered before the %s to p = %d (at p = %d, so that the restore dealt them out with the rest of the saved splits): the model places them so, and a difference from it is drift.", what, step, n.To, n.From)
		}
		return fmt.Sprintf("The observed readers show %s discovered after the %s to p = %d (placed by the hash rule at p = %d): the model places them so, and a difference from it is drift.", what, step, n.To, n.To)
	case live.NoteDiscoveredBeforeRestore:
		return "Partitions were discovered before the latest restore or rescale, so the saved split lists, and with them every chunk, are not known exactly: all owners are the model's best guess and differences are not counted as drift."
	case live.NoteUnnamedTopics:
		return fmt.Sprintf("Without Kafka metadata the real name of %s is not known (Flink's metric ids write '.' as '_'; the start subtask of a topic depends on its name), so its partitions are not modelled. Configure the Kafka cluster of this Flink endpoint.", topicList(n.Topics))
	case live.NoteUndetermined:
		what := fmt.Sprintf("The readers of %d partitions are", n.Partitions)
		if n.Partitions == 1 {
			what = "The reader of 1 partition is"
		}
		why := "Flink's metric ids still carry values from before the latest restart (Flink keeps a metric id after its split moves, and refreshes values at most every 10 s), and none written by the current attempts decides yet."
		settles := " The next metric refresh or a record on the partition settles it."
		if n.Withheld {
			why = "no KafkaSourceReader offset metric id that Flink lists names them (see the note on the missing metrics), or those that do carry values from before the latest restart."
			settles = ""
		}
		// How the page draws such cells: outlined, each in the row of a
		// subtask that may read it.
		drawn := "Such cells are outlined, each in the row of a subtask that may read it, not of an observed reader"
		if n.Listed {
			drawn += "; a cell's title names the subtasks whose metric ids list it."
		} else {
			drawn += "."
		}
		return what + " not determined: " + why + " " + drawn + settles
	}
	return n.Text
}

// noteTexts says a prediction's notes.
func noteTexts(ns []live.Note) []string {
	if len(ns) == 0 {
		return nil
	}
	out := make([]string, len(ns))
	for i, n := range ns {
		out[i] = noteText(n)
	}
	return out
}

// countOf is "1 partition", "3 partitions".
func countOf(n int, one, many string) string {
	return strconv.Itoa(n) + " " + plural(n, one, many)
}

// retentionWords is a retention time in words: "2-minute", "7-day",
// "90-second", or the seconds as format.Seconds writes them.
func retentionWords(sec float64) string {
	s := int64(math.Round(sec))
	for _, u := range []struct {
		n    int64
		unit string
	}{{86400, "day"}, {3600, "hour"}, {60, "minute"}, {1, "second"}} {
		if s >= u.n && s%u.n == 0 {
			return strconv.FormatInt(s/u.n, 10) + "-" + u.unit
		}
	}
	return format.Seconds(sec)
}

// limitText is a retention limit in words for a page.
func limitText(v *int64, bytes bool) string {
	switch {
	case v == nil:
		return "unknown"
	case *v < 0:
		return "no limit"
	case bytes:
		return format.Bytes(*v)
	}
	return format.Seconds(float64(*v) / 1000)
}

// retentionText is a topic's retention settings in words: "2 m 0 s,
// delete (no byte limit)".
func retentionText(tr live.TopicRetention) string {
	s := limitText(tr.RetentionMs, false)
	if tr.RetentionBytes != nil && *tr.RetentionBytes >= 0 {
		s += " or " + limitText(tr.RetentionBytes, true) + " per partition"
	}
	return s + ", cleanup " + cmp.Or(tr.CleanupPolicy, "unknown")
}

// aboutWords is an estimate's duration in whole units: "45 s", "4 min",
// "2 h".
func aboutWords(sec float64) string {
	switch {
	case sec < 90:
		return strconv.FormatFloat(math.Ceil(sec), 'f', 0, 64) + " s"
	case sec < 90*60:
		return strconv.FormatFloat(math.Round(sec/60), 'f', 0, 64) + " min"
	case sec < 36*3600:
		return strconv.FormatFloat(math.Round(sec/3600), 'f', 0, 64) + " h"
	}
	return strconv.FormatFloat(math.Round(sec/86400), 'f', 0, 64) + " days"
}

// figureWords are a headline figure's label, its text (the number as the
// page shows it, with its unit; – when unknown) and its note (its source or
// method, or why it is unknown).
func figureWords(vv live.VertexView, f live.Figure) (label, txt, note string) {
	switch f.Name {
	case live.FigureTotalLag:
		if f.Value < 0 {
			return "Total lag", "–", "no end offsets or current offsets yet"
		}
		return "Total lag", format.Records(f.Value), "log end − (Flink currentOffset + 1)"
	case live.FigureMaxLagTime:
		label = "Max lag in time"
		if f.Value < 0 {
			return label, "–", "no partition's lag in time is known yet (needs Kafka end offsets and Flink positions)"
		}
		where := f.Partition
		if where != "" && f.AtLeast {
			where += " (at least)"
		}
		note = cmp.Or(where, "all partitions caught up")
		if f.Unknown > 0 {
			note = fmt.Sprintf("%s · %d of %d partitions unknown", cmp.Or(where, "the known ones caught up"), f.Unknown, f.Of)
		}
		return label, format.Seconds(f.Value), note
	case live.FigureProduced:
		if f.Value < 0 {
			return "Produced", "–", "needs two Kafka polls"
		}
		return "Produced", format.Rate(f.Value), "records/s into its partitions, from Kafka's end-offset deltas"
	case live.FigureRecordsLost:
		return lossWords(f)
	case live.FigureRetention:
		return retentionFigureWords(vv, f)
	case live.FigureTimeToRetention:
		label = "Time to retention"
		switch {
		case f.Value < 0 && len(vv.Retention) == 0:
			return label, "–", "needs the topics' retention"
		case f.Value < 0:
			return label, "–", "no partition's lag time is growing toward a retention limit"
		case f.Value == 0:
			return label, "0 s", fmt.Sprintf("subtask %d is past the %s retention of %s: records are deleted unread", f.Subtask, retentionWords(f.Seconds), f.Partition)
		}
		return label, "≈ " + format.Seconds(f.Value), fmt.Sprintf("at this rate subtask %d falls past the %s retention of %s in about %s; from then on Kafka deletes records before the job reads them (from the lag time's trend)",
			f.Subtask, retentionWords(f.Seconds), f.Partition, aboutWords(f.Value))
	case live.FigureStates:
		label, note = "Partition states", "from the last minute of samples of each partition's position and end offset"
		if len(vv.States) == 0 {
			return label, "–", note
		}
		parts := make([]string, len(vv.States))
		for i, sc := range vv.States {
			parts[i] = strconv.Itoa(sc.Count) + " " + readerStateLabel(sc.State)
		}
		return label, strings.Join(parts, " · "), note
	case live.FigureSkew:
		label = "Skew (Flink %)"
		if vv.Source {
			label = "Source skew (Flink %)"
		}
		if f.Value < 0 {
			return label, "–", "records/s not reported for every subtask"
		}
		return label, format.Percent(f.Value), fmt.Sprintf("of observed records/s per subtask; max/mean %.2f", f.Ratio)
	case live.FigureAssignment:
		return assignmentWords(vv, f)
	case live.FigureKeyGroups:
		txt = strconv.Itoa(int(f.Min))
		if f.Min != f.Value {
			txt += "–" + strconv.Itoa(int(f.Value))
		}
		return "Key groups per subtask", txt, fmt.Sprintf("maxParallelism %d over %d subtasks (KeyGroupRangeAssignment)", vv.MaxParallelism, vv.Parallelism)
	case live.FigureStateSize:
		if f.Value < 0 {
			return "State size", "–", "no completed checkpoint seen"
		}
		return "State size", format.Bytes(int64(f.Value)), "latest completed checkpoint"
	case live.FigureBusiest:
		if f.Subtask < 0 {
			return "Busiest subtask", "–", "busy time not reported"
		}
		return "Busiest subtask", fmt.Sprintf("#%d · %s busy", f.Subtask, format.Ratio(f.Value)), "busy · backpressured " + format.Ratio(f.Ratio)
	}
	return f.Name, format.Count(f.Value), ""
}

// lossWords are the records Kafka deleted before the source read them:
// the total, where most were lost and when.
func lossWords(f live.Figure) (label, txt, note string) {
	label = "Records deleted unread"
	counting := "counted since skewscope started " + format.Between(f.Since, f.Since) + "; a restart counts from 0"
	if f.Partitions == 0 {
		note = "none seen: no position below its partition's log start; " + counting
		if f.Behind > 0 {
			note = fmt.Sprintf("%d partitions' positions are below the log start; %s", f.Behind, counting)
		}
		return label, "0", note
	}
	where := f.Partition
	switch {
	case f.Partitions == 2:
		where += fmt.Sprintf(" (≈ %s) and 1 more partition", format.Int(f.Records))
	case f.Partitions > 2:
		where += fmt.Sprintf(" (≈ %s) and %d more partitions", format.Int(f.Records), f.Partitions-1)
	}
	return label, "≈ " + format.Int(int64(f.Value)), "records deleted unread on " + where + " " + format.Between(f.From, f.To) + " (Kafka's log start passed the position); " + counting
}

// retentionFigureWords is the source's topics' retention: the shortest that
// deletes, and each topic's settings with when they were read.
func retentionFigureWords(vv live.VertexView, f live.Figure) (label, txt, note string) {
	label = "Retention"
	if len(vv.Retention) == 0 {
		return label, "–", "not read yet (DescribeConfigs, once a minute)"
	}
	var parts []string
	oldest := vv.Retention[0].Age
	for _, tr := range vv.Retention {
		parts = append(parts, tr.Topic+": "+retentionText(tr))
		if tr.Age.Seconds > oldest.Seconds {
			oldest = tr.Age
		}
	}
	note = strings.Join(parts, "; ") + " · read from the brokers " + format.Seconds(float64(oldest.Seconds)) + " ago"
	if oldest.Stale || oldest.Err != "" {
		note += " (the latest read failed)"
	}
	if f.Value < 0 {
		return label, "no deletion by time", note
	}
	return label, format.Seconds(f.Value), note
}

// assignmentWords are the prediction's verdicts as a figure, in the words
// the rows use.
func assignmentWords(vv live.VertexView, f live.Figure) (label, txt, note string) {
	label = "Assignment"
	pr := vv.Prediction
	if pr == nil {
		return label, "–", ""
	}
	h := pr.Headline
	switch {
	case h.Kind == live.BasisNotModelled:
		return label, fmt.Sprintf("%d partitions", pr.Total), "not modelled"
	case f.Value < 0:
		return label, "prediction only", fmt.Sprintf("%d partitions where the %s prediction puts them: Flink withheld their readers' metrics", pr.Total, pr.Mode)
	}
	v := h.Verdicts
	txt = fmt.Sprintf("%d / %d partitions", v.Placed(), pr.Total)
	note = string(h.Kind) + " · " + string(pr.Mode)
	if v.Drift > 0 {
		note = fmt.Sprintf("%d differ from the %s prediction", v.Drift, pr.Mode)
	}
	for _, o := range []struct {
		n    int
		what string
	}{{v.Guessed, "as guessed"}, {v.NotGuessed, "not as guessed"}, {v.Undetermined, "reader not determined"},
		{v.Withheld, "prediction only (metrics withheld)"}, {v.NotModelled, "not modelled"}} {
		if o.n > 0 {
			note += fmt.Sprintf(" · %d %s", o.n, o.what)
		}
	}
	return label, txt, note
}

// groupHow says how a source's consumer group was found.
func groupHow(g *live.GroupLink) string {
	switch g.Found {
	case live.GroupConfigured:
		return "from configuration"
	case live.GroupCommitsEqual:
		return "discovered: its commits equal the job's committedOffset on " + strconv.Itoa(g.Matched) + " of " + strconv.Itoa(g.Partitions) + " partitions"
	case live.GroupCommitsOn:
		return "discovered: it has commits on " + strconv.Itoa(g.Matched) + " of the vertex's " + strconv.Itoa(g.Partitions) + " partitions"
	}
	return ""
}
