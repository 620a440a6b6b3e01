// Package format is the one home of the figures skewscope writes on its
// pages: counts, rates, ratios, durations and sizes. Every page and every
// live update writes a figure with these functions, so a figure reads the
// same wherever it is shown.
//
// The unit convention: counts and rates use decimal steps (k = 1,000,
// M = 1,000,000), sizes use binary IEC units (KiB = 1,024 bytes, MiB, GiB,
// TiB), as Flink's checkpoint sizes are powers of two. A negative or NaN
// value is unknown and is written "–".
package format

import (
	"math"
	"strconv"
	"strings"
	"time"
)

// Unknown is what a figure that is not known reads.
const Unknown = "–"

func unknown(x float64) bool { return x < 0 || math.IsNaN(x) }

// Count writes a count compactly: 978, 4.9k, 49k, 1.2M.
func Count(x float64) string {
	switch {
	case unknown(x):
		return Unknown
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

// Records writes a count of records with its unit: "978 records",
// "4.9k records", "1 record".
func Records(x float64) string {
	switch c := Count(x); c {
	case Unknown:
		return Unknown
	case "1":
		return "1 record"
	default:
		return c + " records"
	}
}

// Int writes a non-negative integer with thousands separators (412,838).
func Int(x int64) string {
	if x < 0 {
		return Unknown
	}
	return group(strconv.FormatInt(x, 10))
}

// Signed writes an integer with thousands separators and its sign
// (-1,200), for differences, which may be negative.
func Signed(x int64) string {
	if x < 0 {
		return "-" + group(strconv.FormatUint(uint64(-(x+1))+1, 10))
	}
	return group(strconv.FormatInt(x, 10))
}

// group puts thousands separators into a string of digits.
func group(s string) string {
	if len(s) <= 3 {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + len(s)/3)
	for i := range len(s) {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// Rate writes records per second: "3,647/s", "2.5/s".
func Rate(x float64) string {
	if unknown(x) {
		return Unknown
	}
	if x < 10 {
		return strconv.FormatFloat(x, 'f', 1, 64) + "/s"
	}
	return Int(int64(math.Round(x))) + "/s"
}

// Num writes a count or a rate given by a person (the planner's inputs and
// what follows from them): whole numbers and numbers of 100 or more with
// thousands separators, small fractions with two decimals.
func Num(v float64) string {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return Unknown
	}
	if math.Abs(v-math.Round(v)) < 1e-9 || math.Abs(v) >= 100 {
		return Signed(int64(math.Round(v)))
	}
	return strconv.FormatFloat(v, 'f', 2, 64)
}

// Seconds writes a duration in seconds: "0 s", "4 s", "3 m 20 s",
// "2 h 5 m", "3 d 4 h".
func Seconds(x float64) string {
	if unknown(x) {
		return Unknown
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

// Between writes when something was seen, in UTC: "at 10:41:05 UTC" for
// one instant, "between 10:41:05 and 10:43:12 UTC" on one day, with the
// dates when the two are on different days; "–" when first is zero.
func Between(first, last time.Time) string {
	if first.IsZero() {
		return Unknown
	}
	first, last = first.UTC(), last.UTC()
	if last.Before(first) {
		last = first
	}
	const clock, day = "15:04:05", "2006-01-02 15:04:05"
	switch {
	case last.Truncate(time.Second).Equal(first.Truncate(time.Second)):
		return "at " + first.Format(clock) + " UTC"
	case first.Format(time.DateOnly) == last.Format(time.DateOnly):
		return "between " + first.Format(clock) + " and " + last.Format(clock) + " UTC"
	}
	return "between " + first.Format(day) + " and " + last.Format(day) + " UTC"
}

// Millis writes a duration in milliseconds: "412 ms", "1500 ms".
func Millis(ms int64) string {
	if ms < 0 {
		return Unknown
	}
	return strconv.FormatInt(ms, 10) + " ms"
}

// Ratio writes a 0–1 ratio as a whole percentage: "53%".
func Ratio(x float64) string {
	if unknown(x) {
		return Unknown
	}
	return strconv.FormatFloat(math.Round(x*100), 'f', 0, 64) + "%"
}

// Percent writes a percentage (0–100 and beyond, as Flink's skew is):
// whole, or with one decimal below 1 so that a small skew does not read 0%.
// It is the one rounding rule for percentages: every table, figure and
// sentence writes one with Percent (or Points), so a candidate's 114.5 %
// reads "115%" in the planner's table and in its verdict alike.
func Percent(v float64) string {
	if math.IsNaN(v) {
		return Unknown
	}
	return percent(v) + "%"
}

// Points writes a difference of two percentages in percentage points,
// rounded as Percent rounds: "12 points".
func Points(v float64) string {
	if math.IsNaN(v) {
		return Unknown
	}
	return percent(v) + " points"
}

// percent is v rounded half away from zero (math.Round) to a whole number,
// or to one decimal below 1. strconv and fmt's %.0f round half to even
// (114.5 → 114), so they are not used for the whole numbers.
func percent(v float64) string {
	if v != 0 && math.Abs(v) < 1 {
		return strconv.FormatFloat(math.Round(v*10)/10, 'f', 1, 64)
	}
	return strconv.FormatFloat(math.Round(v), 'f', 0, 64)
}

// Factor writes a ratio of two figures with two decimals: "1.37".
func Factor(v float64) string { return strconv.FormatFloat(v, 'f', 2, 64) }

// Bytes writes a size in binary units: "512 B", "1.5 KiB", "3.0 GiB".
func Bytes(x int64) string {
	if x < 0 {
		return Unknown
	}
	if x < 1024 {
		return strconv.FormatInt(x, 10) + " B"
	}
	f := float64(x) / 1024
	for _, u := range []string{"KiB", "MiB", "GiB"} {
		if f < 1024 {
			return strconv.FormatFloat(f, 'f', 1, 64) + " " + u
		}
		f /= 1024
	}
	return strconv.FormatFloat(f, 'f', 1, 64) + " TiB"
}
