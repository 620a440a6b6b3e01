package live

import (
	"math"
	"strconv"
)

// FormatCount writes a count compactly: 978, 49k, 1.2M; "–" when negative
// (unknown).
func FormatCount(x float64) string {
	switch {
	case x < 0 || math.IsNaN(x):
		return "–"
	case x < 1000:
		return strconv.FormatFloat(math.Round(x), 'f', 0, 64)
	case x < 10_000:
		return strconv.FormatFloat(x/1000, 'f', 1, 64) + "k"
	case x < 1_000_000:
		return strconv.FormatFloat(math.Round(x/1000), 'f', 0, 64) + "k"
	case x < 10_000_000:
		return strconv.FormatFloat(x/1e6, 'f', 1, 64) + "M"
	case x < 1e9:
		return strconv.FormatFloat(math.Round(x/1e6), 'f', 0, 64) + "M"
	}
	return strconv.FormatFloat(x/1e9, 'f', 1, 64) + "G"
}

// FormatInt writes an integer with thin-space-free thousands separators
// (412,838); "–" when negative.
func FormatInt(x int64) string {
	if x < 0 {
		return "–"
	}
	s := strconv.FormatInt(x, 10)
	out := make([]byte, 0, len(s)+len(s)/3)
	for i := range len(s) {
		if i > 0 && (len(s)-i)%3 == 0 {
			out = append(out, ',')
		}
		out = append(out, s[i])
	}
	return string(out)
}

// FormatRate writes records per second: "3,647/s"; "–" when negative.
func FormatRate(x float64) string {
	if x < 0 || math.IsNaN(x) {
		return "–"
	}
	if x < 10 {
		return strconv.FormatFloat(x, 'f', 1, 64) + "/s"
	}
	return FormatInt(int64(math.Round(x))) + "/s"
}

// FormatSeconds writes a duration in seconds: "0 s", "4 s", "3 m 20 s",
// "2 h 5 m".
func FormatSeconds(x float64) string {
	if x < 0 || math.IsNaN(x) {
		return "–"
	}
	s := int64(math.Round(x))
	switch {
	case s < 60:
		return strconv.FormatInt(s, 10) + " s"
	case s < 3600:
		return strconv.FormatInt(s/60, 10) + " m " + strconv.FormatInt(s%60, 10) + " s"
	case s < 86400:
		return strconv.FormatInt(s/3600, 10) + " h " + strconv.FormatInt(s%3600/60, 10) + " m"
	}
	return strconv.FormatInt(s/86400, 10) + " d " + strconv.FormatInt(s%86400/3600, 10) + " h"
}

// FormatRatio writes a 0–1 ratio as a whole percentage; "–" when negative.
func FormatRatio(x float64) string {
	if x < 0 || math.IsNaN(x) {
		return "–"
	}
	return strconv.FormatFloat(math.Round(x*100), 'f', 0, 64) + "%"
}

// FormatBytes writes a size in bytes with binary units; "–" when negative.
func FormatBytes(x int64) string {
	if x < 0 {
		return "–"
	}
	f := float64(x)
	for _, u := range []string{"B", "KiB", "MiB", "GiB"} {
		if f < 1024 || u == "GiB" {
			if u == "B" {
				return strconv.FormatInt(x, 10) + " B"
			}
			return strconv.FormatFloat(f, 'f', 1, 64) + " " + u
		}
		f /= 1024
	}
	return ""
}
