package web

import (
	"hash/fnv"
	"io"
	"strconv"

	"github.com/skewscope/skewscope/internal/format"
	"github.com/skewscope/skewscope/live"
	"github.com/skewscope/skewscope/views"
)

// liveUpdate is the compact websocket form of a live page. The page marks
// the elements it updates: T holds the texts of its [data-t] elements, L
// the colour levels of the [data-l] cells in its table body and M the
// values of its [data-m] meters, each in document order. A Shape other than
// the page's data-shape means the layout changed (a restore, new partitions,
// new jobs): the page fetches its new rendering instead. Texts are set with
// textContent; the page never builds HTML from an update.
type liveUpdate struct {
	Shape string `json:"shape"`
	// Ages are the data times (Unix ms, 0 unknown) of the page's [data-age]
	// elements in document order; the page counts their age up from these.
	Ages  []int64     `json:"ages"`
	Stale bool        `json:"stale"`
	Err   string      `json:"error,omitempty"`
	T     []string    `json:"t"`
	L     []int       `json:"l,omitempty"`
	M     []string    `json:"m,omitempty"`
	Spark [][]float64 `json:"spark,omitempty"`
}

func ageUpdate(u *liveUpdate, a live.Age) {
	u.Stale = a.Stale || a.Err != ""
	u.Err = a.Err
}

// replacedAge is the age the replaced-job banner shows, first on its page.
func replacedAge(r *live.Replacement) []int64 {
	if r == nil {
		return nil
	}
	return []int64{ms(live.Age{At: r.At})}
}

func ms(a live.Age) int64 {
	if a.At.IsZero() {
		return 0
	}
	return a.At.UnixMilli()
}

func shapeHash(parts ...string) string {
	h := fnv.New64a()
	for _, p := range parts {
		io.WriteString(h, p)
		h.Write([]byte{0})
	}
	return strconv.FormatUint(h.Sum64(), 36)
}

// overviewShape identifies the overview's rows.
func overviewShape(ov live.OverviewView) string {
	var parts []string
	for _, e := range ov.Endpoints {
		parts = append(parts, "e", e.Name, e.FlinkVersion, strconv.Itoa(e.Jobs), strconv.FormatBool(e.Age.Stale || e.Age.Err != ""), e.Age.State)
	}
	for _, j := range ov.Jobs {
		parts = append(parts, "j", j.ID, j.State)
		if j.ReplacedBy != nil {
			parts = append(parts, "replaced by", j.ReplacedBy.Current)
		}
	}
	for _, c := range ov.Clusters {
		parts = append(parts, "c", c.Name, strconv.Itoa(c.Topics), strconv.Itoa(c.Partitions), strconv.Itoa(c.Groups), strconv.FormatBool(c.Age.Stale || c.Age.Err != ""), c.Age.State)
	}
	for _, t := range ov.Topics {
		parts = append(parts, "t", t.Cluster, t.Name, strconv.Itoa(t.Partitions), strconv.Itoa(t.Groups))
	}
	return shapeHash(parts...)
}

func overviewUpdate(ov live.OverviewView) liveUpdate {
	u := liveUpdate{Shape: overviewShape(ov)}
	// A backend not yet polled has no age on the page (overviewShape
	// changes with the state).
	for _, e := range ov.Endpoints {
		u.T = append(u.T, views.PollText(e.Age, e.PollMillis), views.EndpointCost(e), views.EndpointBudget(e), views.EndpointBackoff(e))
		if e.Age.State != live.StateNotPolled {
			u.Ages = append(u.Ages, ms(e.Age))
		}
	}
	for _, j := range ov.Jobs {
		u.T = append(u.T, format.Int(j.Lag), format.Ratio(j.MaxBusy), views.OrDash(j.Backpressure))
		if j.ReplacedBy == nil { // a replaced job's row links to its successor instead
			u.T = append(u.T, views.JobDrift(j))
		}
	}
	for _, c := range ov.Clusters {
		u.T = append(u.T, views.BackendFigure(c.Age, format.Rate(c.Rate)), views.PollText(c.Age, c.PollMillis))
		if c.Age.State != live.StateNotPolled {
			u.Ages = append(u.Ages, ms(c.Age))
		}
	}
	for _, t := range ov.Topics {
		u.T = append(u.T, format.Rate(t.Rate))
	}
	return u
}

func jobShape(jv live.JobView) string {
	parts := []string{jv.State, strconv.FormatBool(jv.Restored != nil)}
	if jv.ReplacedBy != nil {
		parts = append(parts, "replaced by", jv.ReplacedBy.Current)
	}
	for _, v := range jv.Vertices {
		parts = append(parts, v.ID, strconv.Itoa(v.Parallelism))
	}
	return shapeHash(parts...)
}

func jobUpdate(jv live.JobView) liveUpdate {
	u := liveUpdate{Shape: jobShape(jv)}
	ageUpdate(&u, jv.Age)
	u.Ages = append(replacedAge(jv.ReplacedBy), ms(jv.Age))
	for _, v := range jv.Vertices {
		u.T = append(u.T, views.SkewText(v.Skew), views.BusiestText(v), views.OrDash(v.Backpressure), format.Int(v.Lag), views.VertexDrift(v))
	}
	return u
}

func vertexUpdate(vv live.VertexView) liveUpdate {
	u := liveUpdate{Shape: vv.Shape}
	ageUpdate(&u, vv.Flink)
	u.Ages = append(replacedAge(vv.ReplacedBy), ms(vv.Flink))
	if k := vv.KafkaAge; k != nil {
		u.Ages = append(u.Ages, ms(*k))
		u.Stale = u.Stale || k.Stale || k.Err != ""
	}
	for _, f := range vv.Figures {
		u.T = append(u.T, f.Text, f.Note)
	}
	for _, r := range vv.Subtasks {
		if vv.Kafka {
			for _, c := range r.Partitions {
				u.T = append(u.T, views.CellText(vv, c))
				u.L = append(u.L, c.Level)
			}
			u.T = append(u.T, format.Rate(r.Rate), format.Rate(r.RecordsOut), format.Int(r.Lag), views.LagTime(r))
			u.M = append(u.M, views.MeterValue(r.Busy))
			u.T = append(u.T, format.Ratio(r.Busy), views.RowVs(vv, r))
			u.Spark = append(u.Spark, r.SparkLag, r.SparkRate)
			continue
		}
		u.T = append(u.T, format.Rate(r.RecordsIn), format.Rate(r.RecordsOut))
		u.M = append(u.M, views.MeterValue(r.Busy))
		u.T = append(u.T, format.Ratio(r.Busy), format.Ratio(r.BackPressured), format.Bytes(r.StateSize))
	}
	return u
}

func topicShape(tv live.TopicView) string {
	parts := []string{strconv.Itoa(len(tv.Partitions)), tv.Error}
	for _, g := range tv.Groups {
		parts = append(parts, g.Name, g.State)
	}
	for _, p := range tv.Partitions {
		parts = append(parts, strconv.FormatBool(p.Stale))
	}
	return shapeHash(parts...)
}

func topicUpdate(tv live.TopicView) liveUpdate {
	u := liveUpdate{Shape: topicShape(tv)}
	ageUpdate(&u, tv.Age)
	u.Ages = []int64{ms(tv.Age)}
	u.T = append(u.T, format.Rate(tv.Rate))
	for _, p := range tv.Partitions {
		u.T = append(u.T, format.Int(p.Start), format.Int(p.End), format.Rate(p.Rate))
		for _, g := range p.Groups {
			u.T = append(u.T, format.Int(g.Lag), views.GroupLagTime(g))
		}
	}
	return u
}
