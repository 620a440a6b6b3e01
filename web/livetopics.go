package web

import (
	"net/url"
	"strings"

	"github.com/skewscope/skewscope/assign"
	"github.com/skewscope/skewscope/live"
)

// vertexTopic is the websocket topic of a vertex view: the page and the
// publisher both name it with this, and parseVertexTopic reads it back. A
// ?history= is part of it, since it changes the view (its model and so its
// layout), and so is ?parts=, since a page shows only the figures of its
// parts, and so are the grid's order and filter (gridQuery), since they
// change its rows: "vertex:JOB/VERTEX[:rate|:watermark][:history=4-6][:parts=grid-figures]
// [:sort=lag][:topic=orders][:subtasks=10-20]".
func vertexTopic(job, vertex, color string, history []int, parts vertexParts, grid gridQuery) string {
	t := "vertex:" + job + "/" + vertex
	if color == "rate" || color == "watermark" {
		t += ":" + color
	}
	if len(history) > 0 {
		t += ":history=" + strings.ReplaceAll(assign.FormatHistory(history), ",", "-")
	}
	if o := parts.topicOption(); o != "" {
		t += ":parts=" + o
	}
	return t + grid.topicOptions()
}

// parseVertexTopic reads a vertexTopic back into the job, the vertex, the
// view's query, the page's parts and its grid's order and filter; ok is
// false for anything vertexTopic does not write.
func parseVertexTopic(t string) (job, vertex string, q live.VertexQuery, parts vertexParts, grid gridQuery, ok bool) {
	rest, ok := strings.CutPrefix(t, "vertex:")
	if !ok {
		return "", "", q, nil, grid, false
	}
	ids, opts, _ := strings.Cut(rest, ":")
	job, vertex, ok = strings.Cut(ids, "/")
	if !ok || job == "" || vertex == "" || strings.Contains(vertex, "/") {
		return "", "", q, nil, grid, false
	}
	v := url.Values{}
	for o := range strings.SplitSeq(opts, ":") {
		switch k, val, _ := strings.Cut(o, "="); {
		case o == "":
		case (o == "rate" || o == "watermark") && !v.Has("color") && !v.Has("history") && parts == nil:
			v.Set("color", o)
		case k == "history" && val != "" && !v.Has("history") && parts == nil:
			v.Set("history", strings.ReplaceAll(val, "-", ","))
		case k == "parts" && parts == nil:
			if parts, ok = partsOfTopic(val); !ok {
				return "", "", q, nil, grid, false
			}
		case (k == "sort" || k == "topic" || k == "subtasks") && val != "" && !v.Has(k):
			v.Set(k, val)
		default:
			return "", "", q, nil, grid, false
		}
	}
	q, err := vertexQuery(v)
	if err != nil {
		return "", "", q, nil, grid, false
	}
	if grid, err = parseGridQuery(v); err != nil || vertexTopic(job, vertex, q.Color, q.History, parts, grid) != t {
		return "", "", q, nil, gridQuery{}, false
	}
	return job, vertex, q, parts, grid, true
}

// embedOption ends the topic of an embedded vertex page: its update is
// built as the embedded page is (a one-line head and no prediction card),
// so it is not shared with a page of its own whose update carries figures
// the embedded page does not show.
const embedOption = ":embed"

// Live topics: the page subscribes to its topic and the publisher publishes
// to it; both name it with these functions.
const overviewTopic = "overview"

func jobTopic(jobID string) string { return "job:" + jobID }

func topicTopic(cluster, topic string) string { return "topic:" + cluster + "/" + topic }
