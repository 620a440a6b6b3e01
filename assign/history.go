package assign

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/skewscope/skewscope/internal/quote"
)

// ParseHistory reads a source's parallelism history as people write it: the
// parallelisms from its fresh start on, separated by commas, spaces, "-",
// ">" or "→" ("4,6", "4 → 6"). It is the one reader of the planner's and the
// vertex page's ?history=; the error names what is wrong with the text.
func ParseHistory(s string) ([]int, error) {
	fields := strings.FieldsFunc(s, func(r rune) bool {
		return r == ',' || r == ' ' || r == '→' || r == '>' || r == '-'
	})
	if len(fields) == 0 || len(fields) > MaxRestoreHistory {
		return nil, fmt.Errorf("%s: write the source's parallelisms from its fresh start on, like 4,6 (at most %d)", quote.Clip(s), MaxRestoreHistory)
	}
	h := make([]int, len(fields))
	for i, f := range fields {
		p, err := strconv.Atoi(f)
		if err != nil || CheckParallelism(p) != nil {
			return nil, fmt.Errorf("%s is not a parallelism: Flink accepts 1..%d", quote.Clip(f), UpperBoundMaxParallelism)
		}
		h[i] = p
	}
	return h, nil
}

// FormatHistory writes a history for a URL: "4,6", which ParseHistory reads
// back.
func FormatHistory(h []int) string {
	parts := make([]string, len(h))
	for i, p := range h {
		parts[i] = strconv.Itoa(p)
	}
	return strings.Join(parts, ",")
}
