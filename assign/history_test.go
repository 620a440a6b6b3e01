package assign

import (
	"slices"
	"strings"
	"testing"
)

func TestParseHistory(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want []int
		err  string
	}{
		{in: "4,6", want: []int{4, 6}},
		{in: " 4 → 6 -> 8 ", want: []int{4, 6, 8}},
		{in: "4-6", want: []int{4, 6}},
		{in: "32768", want: []int{32768}},
		{in: "", err: "write the source's parallelisms"},
		{in: ", ,", err: "write the source's parallelisms"},
		{in: "4,x", err: `"x" is not a parallelism`},
		{in: "0", err: `"0" is not a parallelism`},
		{in: "32769", err: `"32769" is not a parallelism`},
		{in: "-4", want: []int{4}},
		{in: strings.Repeat("2,", MaxRestoreHistory) + "2", err: "at most 64"},
		{in: strings.TrimSuffix(strings.Repeat("2,", MaxRestoreHistory), ","), want: slices.Repeat([]int{2}, MaxRestoreHistory)},
	} {
		got, err := ParseHistory(tc.in)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("ParseHistory(%q) = %v, %v; want error with %q", tc.in, got, err, tc.err)
			}
			continue
		}
		if err != nil || !slices.Equal(got, tc.want) {
			t.Errorf("ParseHistory(%q) = %v, %v; want %v", tc.in, got, err, tc.want)
			continue
		}
		if back, err := ParseHistory(FormatHistory(got)); err != nil || !slices.Equal(back, got) {
			t.Errorf("ParseHistory(FormatHistory(%v)) = %v, %v", got, back, err)
		}
	}
}
