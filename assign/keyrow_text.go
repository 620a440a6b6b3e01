package assign

import (
	"encoding/hex"
	"fmt"
	"math/big"
	"strconv"
	"strings"

	"github.com/skewscope/skewscope/internal/quote"
)

// AppendText writes the next column's value given as text, in the form
// Flink prints the value (CAST(x AS STRING), or the Java toString of its
// external class):
//
//   - BOOLEAN: true or false (any case);
//   - TINYINT, SMALLINT, INT, BIGINT: a decimal integer in the column's range;
//   - FLOAT, DOUBLE: a decimal or exponent form, NaN, Infinity or -Infinity,
//     parsed as Float.parseFloat / Double.parseDouble would (a NaN is Java's
//     canonical NaN);
//   - CHAR, VARCHAR: the text itself, as AppendString;
//   - BINARY, VARBINARY: hexadecimal digits, optionally as X'0A1B';
//   - DATE: yyyy-mm-dd (years 0000..9999);
//   - TIME: hh:mm[:ss[.fraction]];
//   - TIMESTAMP: yyyy-mm-dd hh:mm[:ss[.fraction]] ('T' between date and time
//     accepted), a wall-clock time;
//   - TIMESTAMP_LTZ: the same followed by Z or an offset (+02:00), an
//     instant: its internal value does not depend on a session time zone;
//   - DECIMAL(p, s): a plain decimal number with at most s fractional digits
//     (fewer are padded with zeros) and at most p digits in all.
//
// Digits of a fraction beyond the column's precision must be zeros: a
// value of a TIMESTAMP(3) column has no microseconds, and Flink's TIME keeps
// milliseconds only. A null is appended by AppendNull, never by text.
// Leading and trailing spaces are ignored, except in CHAR and VARCHAR.
func (e *KeyRowEncoder) AppendText(text string) error {
	if e.next >= len(e.types) {
		return e.wrongColumn("")
	}
	t := &e.types[e.next]
	bad := func(format string, a ...any) error {
		return e.fail(t, fmt.Sprintf("%s: %s", quote.Clip(text), fmt.Sprintf(format, a...)))
	}
	if t.Root == SQLChar || t.Root == SQLVarChar {
		return e.AppendString(text)
	}
	s := strings.TrimSpace(text)
	switch t.Root {
	case SQLBoolean:
		switch strings.ToLower(s) {
		case "true":
			return e.AppendBoolean(true)
		case "false":
			return e.AppendBoolean(false)
		}
		return bad("want true or false")
	case SQLTinyInt, SQLSmallInt, SQLInt, SQLBigInt:
		v, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			return bad("not an integer in range")
		}
		return e.AppendInt(v)
	case SQLFloat:
		v, ok := parseJavaFloat(s, 32)
		if !ok {
			return bad("not a number")
		}
		return e.AppendFloat(float32(v))
	case SQLDouble:
		v, ok := parseJavaFloat(s, 64)
		if !ok {
			return bad("not a number")
		}
		return e.AppendDouble(v)
	case SQLBinary, SQLVarBinary:
		h := s
		if len(h) >= 3 && (h[0] == 'X' || h[0] == 'x') && h[1] == '\'' && h[len(h)-1] == '\'' {
			h = h[2 : len(h)-1]
		}
		b, err := hex.DecodeString(h)
		if err != nil {
			return bad("want hexadecimal digits, two per byte")
		}
		return e.AppendBytes(b)
	case SQLDate:
		days, err := parseSQLDate(s)
		if err != nil {
			return bad("%v", err)
		}
		return e.AppendDate(int32(days))
	case SQLTime:
		nanos, err := parseSQLTime(s, min(t.Precision, 3))
		if err != nil {
			return bad("%v", err)
		}
		return e.AppendTime(int32(nanos / 1_000_000))
	case SQLTimestamp, SQLTimestampLTZ:
		millis, nanos, err := parseSQLTimestamp(s, t.Precision, t.Root == SQLTimestampLTZ)
		if err != nil {
			return bad("%v", err)
		}
		return e.AppendTimestamp(millis, nanos)
	case SQLDecimal:
		u, err := parseSQLDecimal(s, t.Precision, t.Scale)
		if err != nil {
			return bad("%v", err)
		}
		return e.AppendBigDecimal(u)
	}
	return bad("unsupported type")
}

// parseJavaFloat parses a float as Float.parseFloat / Double.parseDouble do
// for the forms Java prints: decimal and exponent notation, NaN, Infinity,
// -Infinity, with an optional sign. Go's own spellings (Inf, hex floats,
// underscores) are refused, so a value is read the way the JVM reads it.
func parseJavaFloat(s string, bitSize int) (float64, bool) {
	body := strings.TrimLeft(s, "+-")
	if len(s)-len(body) > 1 {
		return 0, false
	}
	switch body {
	case "NaN":
		if body != s {
			return 0, false
		}
	case "Infinity":
	default:
		for _, c := range body {
			if !(c >= '0' && c <= '9' || c == '.' || c == 'e' || c == 'E' || c == '+' || c == '-') {
				return 0, false
			}
		}
		if body == "" {
			return 0, false
		}
	}
	v, err := strconv.ParseFloat(s, bitSize)
	if err != nil {
		// Out of range: Java gives ±Infinity (or ±0 for underflow, which
		// strconv returns without an error).
		if ne, ok := err.(*strconv.NumError); ok && ne.Err == strconv.ErrRange {
			return v, true
		}
		return 0, false
	}
	return v, true
}

// parseSQLDate parses yyyy-mm-dd into days since 1970-01-01 (proleptic
// Gregorian, as LocalDate.toEpochDay).
func parseSQLDate(s string) (int64, error) {
	parts := strings.Split(s, "-")
	if len(parts) != 3 || len(parts[0]) != 4 || len(parts[1]) != 2 || len(parts[2]) != 2 {
		return 0, fmt.Errorf("want a date yyyy-mm-dd")
	}
	y, err1 := strconv.Atoi(parts[0])
	m, err2 := strconv.Atoi(parts[1])
	d, err3 := strconv.Atoi(parts[2])
	if err1 != nil || err2 != nil || err3 != nil || y < 0 {
		return 0, fmt.Errorf("want a date yyyy-mm-dd")
	}
	if m < 1 || m > 12 || d < 1 || d > daysInMonth(y, m) {
		return 0, fmt.Errorf("no such date")
	}
	return EpochDay(int64(y), m, d), nil
}

func daysInMonth(y, m int) int {
	switch m {
	case 2:
		if y%4 == 0 && (y%100 != 0 || y%400 == 0) {
			return 29
		}
		return 28
	case 4, 6, 9, 11:
		return 30
	}
	return 31
}

// EpochDay is the proleptic Gregorian day number relative to 1970-01-01
// (H. Hinnant's days_from_civil) of a date whose month is 1..12; a day past
// the month's end counts on into the next. Mirrors LocalDate.toEpochDay.
func EpochDay(y int64, m, d int) int64 {
	if m <= 2 {
		y--
	}
	era := y / 400
	if y < 0 && y%400 != 0 {
		era--
	}
	yoe := y - era*400
	mp := int64((m + 9) % 12)
	doy := (153*mp+2)/5 + int64(d) - 1
	doe := yoe*365 + yoe/4 - yoe/100 + doy
	return era*146097 + doe - 719468
}

// parseSQLTime parses hh:mm[:ss[.fraction]] into nanoseconds of the day;
// fractional digits beyond maxDigits must be zeros.
func parseSQLTime(s string, maxDigits int) (int64, error) {
	hms, frac, hasFrac := strings.Cut(s, ".")
	parts := strings.Split(hms, ":")
	if len(parts) < 2 || len(parts) > 3 || hasFrac && len(parts) != 3 {
		return 0, fmt.Errorf("want a time hh:mm[:ss[.fraction]]")
	}
	var v [3]int
	for i, p := range parts {
		if len(p) != 2 || p[0] < '0' || p[0] > '9' || p[1] < '0' || p[1] > '9' {
			return 0, fmt.Errorf("want a time hh:mm[:ss[.fraction]]")
		}
		v[i] = int(p[0]-'0')*10 + int(p[1]-'0')
	}
	if v[0] > 23 || v[1] > 59 || v[2] > 59 {
		return 0, fmt.Errorf("no such time of day")
	}
	var nanos int64
	if hasFrac {
		if frac == "" || len(frac) > 9 {
			return 0, fmt.Errorf("want 1 to 9 fractional digits")
		}
		for i := 0; i < 9; i++ {
			d := int64(0)
			if i < len(frac) {
				c := frac[i]
				if c < '0' || c > '9' {
					return 0, fmt.Errorf("want a time hh:mm[:ss[.fraction]]")
				}
				d = int64(c - '0')
				if i >= maxDigits && d != 0 {
					return 0, fmt.Errorf("more than %d fractional digits: the column holds no finer value", maxDigits)
				}
			}
			nanos = nanos*10 + d
		}
	}
	return (int64(v[0])*3600+int64(v[1])*60+int64(v[2]))*1_000_000_000 + nanos, nil
}

// parseSQLTimestamp parses a date and a time (and, for an instant, a zone
// offset) into TimestampData's milliseconds and nanoOfMillisecond.
//
// Mirrors TimestampData.fromLocalDateTime and fromInstant.
func parseSQLTimestamp(s string, precision int, instant bool) (int64, int32, error) {
	sep := strings.IndexAny(s, " T")
	if sep < 0 {
		return 0, 0, fmt.Errorf("want yyyy-mm-dd hh:mm[:ss[.fraction]]")
	}
	date, clock := s[:sep], strings.TrimLeft(s[sep+1:], " ")
	offsetSeconds := int64(0)
	if instant {
		switch {
		case strings.HasSuffix(clock, "Z"):
			clock = clock[:len(clock)-1]
		default:
			i := strings.LastIndexAny(clock, "+-")
			if i < 0 {
				return 0, 0, fmt.Errorf("a TIMESTAMP_LTZ value is an instant: end it with Z or an offset such as +02:00")
			}
			off := clock[i+1:]
			hh, mm, ok := strings.Cut(off, ":")
			h, err1 := strconv.Atoi(hh)
			m, err2 := strconv.Atoi(mm)
			if !ok || len(hh) != 2 || len(mm) != 2 || err1 != nil || err2 != nil || h > 18 || m > 59 {
				return 0, 0, fmt.Errorf("want an offset ±hh:mm")
			}
			offsetSeconds = int64(h*3600 + m*60)
			if clock[i] == '-' {
				offsetSeconds = -offsetSeconds
			}
			clock = clock[:i]
		}
	}
	days, err := parseSQLDate(date)
	if err != nil {
		return 0, 0, err
	}
	nanoOfDay, err := parseSQLTime(strings.TrimSpace(clock), precision)
	if err != nil {
		return 0, 0, err
	}
	millis := days*86_400_000 + nanoOfDay/1_000_000 - offsetSeconds*1000
	return millis, int32(nanoOfDay % 1_000_000), nil
}

// parseSQLDecimal parses a plain decimal number into its unscaled value at
// scale, refusing more than scale fractional digits or more than precision
// digits in all.
func parseSQLDecimal(s string, precision, scale int) (*big.Int, error) {
	body := s
	neg := false
	if body != "" && (body[0] == '-' || body[0] == '+') {
		neg = body[0] == '-'
		body = body[1:]
	}
	whole, frac, _ := strings.Cut(body, ".")
	if whole == "" && frac == "" {
		return nil, fmt.Errorf("not a decimal number")
	}
	for _, c := range whole + frac {
		if c < '0' || c > '9' {
			return nil, fmt.Errorf("not a plain decimal number")
		}
	}
	if len(frac) > scale {
		if strings.TrimRight(frac[scale:], "0") != "" {
			return nil, fmt.Errorf("more than %d fractional digits for DECIMAL(%d, %d)", scale, precision, scale)
		}
		frac = frac[:scale]
	}
	digits := whole + frac + strings.Repeat("0", scale-len(frac))
	u, ok := new(big.Int).SetString(digits, 10)
	if !ok {
		return nil, fmt.Errorf("not a decimal number")
	}
	if u.CmpAbs(bigPow10[precision]) >= 0 {
		return nil, fmt.Errorf("more than %d digits for DECIMAL(%d, %d)", precision, precision, scale)
	}
	if neg {
		u.Neg(u)
	}
	return u, nil
}
