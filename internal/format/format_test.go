package format

import (
	"math"
	"testing"
	"time"
)

func TestFigures(t *testing.T) {
	for _, tc := range []struct{ got, want string }{
		{Count(-1), "–"}, {Count(math.NaN()), "–"}, {Count(978), "978"}, {Count(4900), "4.9k"},
		{Count(49_400), "49k"}, {Count(1_240_000), "1.2M"}, {Count(42e6), "42M"}, {Count(3.5e9), "3.5G"},
		{Records(-1), "–"}, {Records(1), "1 record"}, {Records(0), "0 records"}, {Records(3300), "3.3k records"},
		{Int(-1), "–"}, {Int(0), "0"}, {Int(999), "999"}, {Int(1000), "1,000"}, {Int(412838), "412,838"},
		{Int(math.MaxInt64), "9,223,372,036,854,775,807"},
		{Signed(-1200), "-1,200"}, {Signed(math.MinInt64), "-9,223,372,036,854,775,808"}, {Signed(12), "12"},
		{Rate(-1), "–"}, {Rate(2.54), "2.5/s"}, {Rate(3647.4), "3,647/s"},
		{Num(3), "3"}, {Num(1234.4), "1,234"}, {Num(-2500), "-2,500"}, {Num(1.5), "1.50"}, {Num(math.Inf(1)), "–"},
		{Seconds(-1), "–"}, {Seconds(0.4), "0 s"}, {Seconds(200), "3 m 20 s"}, {Seconds(7500), "2 h 5 m"}, {Seconds(273600), "3 d 4 h"},
		{Ratio(-1), "–"}, {Ratio(0.534), "53%"}, {Ratio(1), "100%"},
		{Percent(0.26), "0.3%"}, {Percent(0), "0%"}, {Percent(137.4), "137%"},
		// Half away from zero, as math.Round: never fmt's half to even.
		{Percent(114.5), "115%"}, {Percent(22.5), "23%"}, {Percent(-2.5), "-3%"}, {Percent(0.25), "0.3%"},
		{Points(12.5), "13 points"}, {Percent(math.NaN()), "–"},
		{Factor(1.366), "1.37"}, {Millis(412), "412 ms"}, {Millis(1500), "1500 ms"}, {Millis(-1), "–"},
		{Bytes(-1), "–"}, {Bytes(512), "512 B"}, {Bytes(1536), "1.5 KiB"}, {Bytes(3 << 30), "3.0 GiB"},
		{Bytes(5 << 40), "5.0 TiB"}, {Bytes(10 << 20), "10.0 MiB"},
		{Between(time.Time{}, time.Time{}), "–"},
		{Between(at(10, 41, 5), at(10, 41, 5).Add(400*time.Millisecond)), "at 10:41:05 UTC"},
		{Between(at(10, 41, 5), at(10, 43, 12)), "between 10:41:05 and 10:43:12 UTC"},
		{Between(at(23, 59, 0), at(23, 59, 0).Add(2*time.Minute)), "between 2026-11-30 23:59:00 and 2026-12-01 00:01:00 UTC"},
		{Between(at(10, 41, 5).In(time.FixedZone("CET", 3600)), at(10, 42, 0)), "between 10:41:05 and 10:42:00 UTC"},
	} {
		if tc.got != tc.want {
			t.Errorf("got %q, want %q", tc.got, tc.want)
		}
	}
}

func at(h, m, s int) time.Time { return time.Date(2026, 11, 30, h, m, s, 0, time.UTC) }
