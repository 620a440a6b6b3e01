package web

import (
	"fmt"
	"slices"

	"github.com/skewscope/skewscope/assign"
	"github.com/skewscope/skewscope/internal/quote"
)

// planHighlightNote says when the planner's ?highlight= marks nothing: it
// is not subtask:N or partition:TOPIC:N, or it names a subtask neither
// layout has (a link from before a rescale) or a partition the plan's topics
// do not have. "" when the highlight is on the page or none was asked for.
func planHighlightNote(f *planForm, hl highlight) string {
	switch {
	case f.Highlight == "":
		return ""
	case hl.subtask < 0 && hl.partition == nil:
		return fmt.Sprintf("Nothing is highlighted: highlight=%s is not subtask:N or partition:TOPIC:N.", quote.Clip(f.Highlight))
	case hl.subtask >= 0:
		if n := max(f.req.Parallelism, f.req.Target); hl.subtask >= n {
			return fmt.Sprintf("Subtask %d is in neither layout: now has %d subtasks (0–%d), the target %d (0–%d); the job may have been rescaled since the link was made.",
				hl.subtask, f.req.Parallelism, f.req.Parallelism-1, f.req.Target, f.req.Target-1)
		}
		return ""
	}
	tp := *hl.partition
	i := slices.IndexFunc(f.req.Topics, func(t assign.Topic) bool { return t.Name == tp.Topic })
	what := fmt.Sprintf("Partition %d of topic %s", tp.Partition, quote.Clip(tp.Topic))
	switch {
	case i < 0:
		return what + " is not highlighted: the plan's topics do not include it."
	case int(tp.Partition) >= f.req.Topics[i].Partitions:
		return fmt.Sprintf("%s is not highlighted: the plan gives that topic %d partitions (0–%d); it may have had more when the link was made.", what, f.req.Topics[i].Partitions, f.req.Topics[i].Partitions-1)
	}
	return ""
}
