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
// layout): "vertex:JOB/VERTEX[:rate][:history=4-6]".
func vertexTopic(job, vertex, color string, history []int) string {
	t := "vertex:" + job + "/" + vertex
	if color == "rate" {
		t += ":rate"
	}
	if len(history) > 0 {
		t += ":history=" + strings.ReplaceAll(assign.FormatHistory(history), ",", "-")
	}
	return t
}

// parseVertexTopic reads a vertexTopic back into the job, the vertex and
// the view's query; ok is false for anything vertexTopic does not write.
func parseVertexTopic(t string) (job, vertex string, q live.VertexQuery, ok bool) {
	rest, ok := strings.CutPrefix(t, "vertex:")
	if !ok {
		return "", "", q, false
	}
	ids, opts, _ := strings.Cut(rest, ":")
	job, vertex, ok = strings.Cut(ids, "/")
	if !ok || job == "" || vertex == "" || strings.Contains(vertex, "/") {
		return "", "", q, false
	}
	v := url.Values{}
	for o := range strings.SplitSeq(opts, ":") {
		switch k, val, _ := strings.Cut(o, "="); {
		case o == "":
		case o == "rate" && !v.Has("color") && !v.Has("history"):
			v.Set("color", "rate")
		case k == "history" && val != "" && !v.Has("history"):
			v.Set("history", strings.ReplaceAll(val, "-", ","))
		default:
			return "", "", q, false
		}
	}
	q, err := vertexQuery(v)
	if err != nil || vertexTopic(job, vertex, q.Color, q.History) != t {
		return "", "", q, false
	}
	return job, vertex, q, true
}

// Live topics: the page subscribes to its topic and the publisher publishes
// to it; both name it with these functions.
const overviewTopic = "overview"

func jobTopic(jobID string) string { return "job:" + jobID }

func topicTopic(cluster, topic string) string { return "topic:" + cluster + "/" + topic }
