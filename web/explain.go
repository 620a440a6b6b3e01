package web

import (
	"strconv"
	"strings"

	"github.com/skewscope/skewscope/live"
	"github.com/skewscope/skewscope/views"
)

// Texts that say what a live page's shorthand means: the letters of the
// partition cells and Kafka's group states.

// cellLabels are the topic prefixes of the source's cell labels ("o" in
// "o3" for orders), in the order of its topics.
func cellLabels(vv live.VertexView) []views.CellLabel {
	prefix := map[string]string{}
	for _, r := range vv.Subtasks {
		for _, c := range r.Partitions {
			if _, ok := prefix[c.Topic]; !ok {
				prefix[c.Topic] = strings.TrimSuffix(c.Label, strconv.Itoa(int(c.Partition)))
			}
		}
	}
	var out []views.CellLabel
	for _, t := range vv.Topics {
		if p, ok := prefix[t]; ok && p != "" {
			out = append(out, views.CellLabel{Prefix: p, Topic: t})
		}
	}
	return out
}

// groupStateTitle says what a consumer group's state (as Kafka's
// ListGroups names it) means for the lag it shows, "" for an unknown state.
func groupStateTitle(state string) string {
	switch state {
	case "Empty":
		return "Empty: the group has no active members; Flink's KafkaSource commits offsets without joining the group"
	case "Stable":
		return "Stable: the group's members have their partitions and consume"
	case "PreparingRebalance", "CompletingRebalance", "Assigning", "Reconciling":
		return state + ": the group is rebalancing; its members consume again once it is stable"
	case "Dead":
		return "Dead: the group has no members and no metadata left; Kafka is removing it"
	}
	return ""
}
