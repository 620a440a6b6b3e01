package keysample

import "github.com/skewscope/skewscope/assign"

// Dates and times as java.time's formatters and java.sql's valueOf parse
// them, for Flink's json and csv formats. Each parser reads the whole text
// and returns false for text the JDK refuses.

// cursor walks ASCII text.
type cursor struct {
	b []byte
	i int
}

func (c *cursor) digits(min, max int) (int64, int, bool) {
	var v int64
	n := 0
	for c.i < len(c.b) && n < max && c.b[c.i] >= '0' && c.b[c.i] <= '9' {
		v = v*10 + int64(c.b[c.i]-'0')
		c.i++
		n++
	}
	return v, n, n >= min
}

func (c *cursor) lit(ch byte) bool {
	if c.i < len(c.b) && c.b[c.i] == ch {
		c.i++
		return true
	}
	return false
}

func (c *cursor) done() bool { return c.i == len(c.b) }

// isoDate reads DateTimeFormatter.ISO_LOCAL_DATE's fields: a year of 4
// digits (a sign allowed, as '-'; more digits, up to 10, need a sign), '-',
// a 2-digit month, '-', a 2-digit day.
func (c *cursor) isoDate() (y int64, m, d int, ok bool) {
	neg, signed := false, false
	if c.i < len(c.b) && (c.b[c.i] == '+' || c.b[c.i] == '-') {
		neg, signed = c.b[c.i] == '-', true
		c.i++
	}
	y, n, ok := c.digits(4, 10)
	if !ok || n > 4 && !signed || n == 4 && signed && !neg {
		return 0, 0, 0, false
	}
	if neg {
		y = -y
	}
	if !c.lit('-') {
		return 0, 0, 0, false
	}
	mm, _, ok1 := c.digits(2, 2)
	if !ok1 || !c.lit('-') {
		return 0, 0, 0, false
	}
	dd, _, ok2 := c.digits(2, 2)
	return y, int(mm), int(dd), ok2
}

// clock reads HH:mm, then ":ss" (required when needSeconds) and, after the
// seconds, an optional '.' with 0 to 9 fractional digits
// (appendFraction(NANO_OF_SECOND, 0, 9, true)).
func (c *cursor) clock(needSeconds bool) (h, mi, s int, nanos int64, ok bool) {
	hh, _, ok1 := c.digits(2, 2)
	if !ok1 || !c.lit(':') {
		return
	}
	mm, _, ok2 := c.digits(2, 2)
	if !ok2 {
		return
	}
	h, mi = int(hh), int(mm)
	if !c.lit(':') {
		return h, mi, 0, 0, !needSeconds
	}
	ss, _, ok3 := c.digits(2, 2)
	if !ok3 {
		return
	}
	s = int(ss)
	if c.lit('.') {
		f, n, _ := c.digits(0, 9)
		for ; n < 9; n++ {
			f *= 10
		}
		nanos = f
	}
	return h, mi, s, nanos, true
}

// localDateTime is a resolved date and time: days since the epoch and
// nanoseconds of the day.
type localDateTime struct {
	days      int64
	nanoOfDay int64
}

func (t localDateTime) millisNanos() (int64, int32) {
	return t.days*86_400_000 + t.nanoOfDay/1_000_000, int32(t.nanoOfDay % 1_000_000)
}

// resolve checks the fields as ResolverStyle.STRICT (smart false) or SMART
// does: SMART clamps a day of 29..31 to the month's last day and reads
// 24:00:00 as the next day's midnight.
func resolve(y int64, m, d, h, mi, s int, nanos int64, smart bool) (localDateTime, bool) {
	if m < 1 || m > 12 || d < 1 || d > 31 || mi > 59 || s > 59 {
		return localDateTime{}, false
	}
	if md := monthDays(y, m); d > md {
		if !smart {
			return localDateTime{}, false
		}
		d = md
	}
	extra := int64(0)
	if h == 24 && smart && mi == 0 && s == 0 && nanos == 0 {
		h, extra = 0, 1
	}
	if h > 23 {
		return localDateTime{}, false
	}
	return localDateTime{
		days:      assign.EpochDay(y, m, d) + extra,
		nanoOfDay: (int64(h)*3600+int64(mi)*60+int64(s))*1_000_000_000 + nanos,
	}, true
}

// parseISODate is ISO_LOCAL_DATE.parse (STRICT), as Flink's json format
// reads a DATE (JsonParserToRowDataConverters.convertToDate).
func parseISODate(b []byte) (int32, bool) {
	c := cursor{b: b}
	y, m, d, ok := c.isoDate()
	if !ok || !c.done() {
		return 0, false
	}
	t, ok := resolve(y, m, d, 0, 0, 0, 0, false)
	if !ok || t.days < -1<<31 || t.days >= 1<<31 {
		return 0, false
	}
	return int32(t.days), true
}

// parseSQLTimeOfDay is Flink's TimeFormats.SQL_TIME_FORMAT ("HH:mm:ss" and
// an optional fraction, SMART) as the json format reads a TIME: the
// milliseconds of the day, the rest of the fraction dropped
// (JsonParserToRowDataConverters.convertToTime).
func parseSQLTimeOfDay(b []byte) (int32, bool) {
	c := cursor{b: b}
	h, mi, s, nanos, ok := c.clock(true)
	if !ok || !c.done() {
		return 0, false
	}
	t, ok := resolve(1970, 1, 1, h, mi, s, nanos, true)
	if !ok {
		return 0, false
	}
	return int32(t.nanoOfDay % 86_400_000_000_000 / 1_000_000), true
}

// parseJSONTimestamp reads a TIMESTAMP (ltz false) or TIMESTAMP_LTZ (ltz
// true) as Flink's json format does for json.timestamp-format.standard SQL
// (iso false) or ISO-8601 (iso true): TimeFormats.SQL_TIMESTAMP_FORMAT
// "yyyy-MM-dd HH:mm:ss[.f]" (SMART), ISO8601_TIMESTAMP_FORMAT
// (ISO_LOCAL_DATE_TIME, STRICT, seconds optional, 'T' in either case), and
// for TIMESTAMP_LTZ the same followed by a literal 'Z', read as UTC
// (SQL_TIMESTAMP_WITH_LOCAL_TIMEZONE_FORMAT,
// ISO8601_TIMESTAMP_WITH_LOCAL_TIMEZONE_FORMAT, both SMART).
//
// Mirrors JsonParserToRowDataConverters.convertToTimestamp and
// convertToTimestampWithLocalZone.
func parseJSONTimestamp(b []byte, iso, ltz bool) (localDateTime, bool) {
	c := cursor{b: b}
	y, m, d, ok := c.isoDate()
	if !ok {
		return localDateTime{}, false
	}
	switch {
	case !iso:
		ok = c.lit(' ')
	case ltz:
		ok = c.lit('T')
	default:
		ok = c.lit('T') || c.lit('t')
	}
	if !ok {
		return localDateTime{}, false
	}
	h, mi, s, nanos, ok := c.clock(!iso)
	if !ok || ltz && !c.lit('Z') || !c.done() {
		return localDateTime{}, false
	}
	return resolve(y, m, d, h, mi, s, nanos, !iso || ltz)
}

// parseISOTime is LocalTime.parse (ISO_LOCAL_TIME, STRICT): HH:mm[:ss[.f]],
// as Flink's csv format reads a TIME (CsvToRowDataConverters.convertToTime),
// in milliseconds of the day.
func parseISOTime(b []byte) (int32, bool) {
	c := cursor{b: b}
	h, mi, s, nanos, ok := c.clock(false)
	if !ok || !c.done() {
		return 0, false
	}
	t, ok := resolve(1970, 1, 1, h, mi, s, nanos, false)
	if !ok {
		return 0, false
	}
	return int32(t.nanoOfDay / 1_000_000), true
}

// sqlDateFields reads java.sql.Date.valueOf's yyyy-[m]m-[d]d: a 4-digit
// year, a month of 1..12 and a day of 1..31 in 1 or 2 digits each.
func sqlDateFields(c *cursor) (y int64, m, d int, ok bool) {
	y, _, ok = c.digits(4, 4)
	if !ok || !c.lit('-') {
		return 0, 0, 0, false
	}
	mm, _, ok1 := c.digits(1, 2)
	if !ok1 || !c.lit('-') {
		return 0, 0, 0, false
	}
	dd, _, ok2 := c.digits(1, 2)
	if !ok2 || mm < 1 || mm > 12 || dd < 1 || dd > 31 {
		return 0, 0, 0, false
	}
	return y, int(mm), int(dd), true
}

// parseSQLDateValueOf is java.sql.Date.valueOf(s).toLocalDate().toEpochDay(),
// as Flink's csv format reads a DATE (CsvToRowDataConverters.convertToDate):
// a day past the month's end rolls into the next month, as the
// java.util.Date constructor under it normalises it.
func parseSQLDateValueOf(b []byte) (int32, bool) {
	c := cursor{b: b}
	y, m, d, ok := sqlDateFields(&c)
	if !ok || !c.done() {
		return 0, false
	}
	return int32(assign.EpochDay(y, m, 1) + int64(d-1)), true
}
