package views

import (
	"net/url"
	"strconv"
	"strings"
)

// JobPath is the job page's path under the route prefix.
func JobPath(id string) string { return "/jobs/" + url.PathEscape(id) }

// VertexPath is the vertex page's path under the route prefix.
func VertexPath(job, vertex string) string {
	return JobPath(job) + "/vertices/" + url.PathEscape(vertex)
}

// TopicPath is the topic page's path under the route prefix.
func TopicPath(cluster, topic string) string {
	return "/kafka/" + url.PathEscape(cluster) + "/topics/" + url.PathEscape(topic)
}

// escapeName escapes a job or vertex name for a by-name path segment. A
// plus is escaped too: the segment is read like a query value, where '+'
// is a space, because that is what alert templates write (Go's and
// Prometheus's urlquery).
func escapeName(name string) string {
	return strings.ReplaceAll(url.PathEscape(name), "+", "%2B")
}

// JobByNamePath is the stable path of a job's current run, under the route
// prefix.
func JobByNamePath(job string) string { return "/jobs/by-name/" + escapeName(job) }

// VertexByNamePath is the stable path of a vertex of a job's current run.
func VertexByNamePath(job, vertex string) string {
	return JobByNamePath(job) + "/vertices/" + escapeName(vertex)
}

// levelAttr is a colour level as its data-l attribute.
func levelAttr(l int) string { return strconv.Itoa(l) }
