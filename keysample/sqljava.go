package keysample

import (
	"math"
	"math/big"
	"strconv"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/skewscope/skewscope/assign"
)

// The Java parsing rules that Flink's formats lean on, each named after the
// JDK method it mirrors. They work on bytes so that the common case (ASCII
// text) allocates nothing.

// javaTrim is String.trim: it removes every char <= ' ' at both ends.
func javaTrim(b []byte) []byte {
	for len(b) > 0 && b[0] <= ' ' {
		b = b[1:]
	}
	for len(b) > 0 && b[len(b)-1] <= ' ' {
		b = b[:len(b)-1]
	}
	return b
}

// javaParseLong is Long.parseLong (and Integer.parseInt, Short.parseShort,
// Byte.parseByte with the bounds lo..hi): an optional sign and ASCII decimal
// digits, nothing else, within range. ok is false for text that is not such
// a number; inRange is false for a number out of lo..hi.
func javaParseLong(b []byte, lo, hi int64) (v int64, ok, inRange bool) {
	if len(b) == 0 {
		return 0, false, false
	}
	neg := false
	i := 0
	if b[0] == '-' || b[0] == '+' {
		neg = b[0] == '-'
		i = 1
	}
	if i == len(b) {
		return 0, false, false
	}
	var u uint64
	over := false
	for ; i < len(b); i++ {
		c := b[i]
		if c < '0' || c > '9' {
			return 0, false, false
		}
		if u > (math.MaxUint64-9)/10 {
			over = true
			continue
		}
		u = u*10 + uint64(c-'0')
	}
	if over || !neg && u > math.MaxInt64 || neg && u > 1<<63 {
		return 0, true, false
	}
	v = int64(u)
	if neg {
		v = -v
	}
	if v < lo || v > hi {
		return v, true, false
	}
	return v, true, true
}

// javaParseFloat is Double.parseDouble (bits 64) and Float.parseFloat (bits
// 32) for the decimal forms: the text trimmed, an optional sign, "NaN",
// "Infinity", or digits with an optional point and exponent, optionally
// followed by one of f, F, d, D. Hexadecimal floats are refused (reported
// as not a number): Flink's formats do not produce them. Out of range is
// ±Infinity or ±0, as in Java. A NaN is Java's canonical NaN.
func javaParseFloat(b []byte, bits int) (float64, bool) {
	b = javaTrim(b)
	if n := len(b); n > 0 {
		switch b[n-1] {
		case 'f', 'F', 'd', 'D':
			b = b[:n-1]
		}
	}
	body := b
	if len(body) > 0 && (body[0] == '+' || body[0] == '-') {
		body = body[1:]
	}
	switch string(body) {
	case "NaN":
		return math.NaN(), true
	case "Infinity":
		if b[0] == '-' {
			return math.Inf(-1), true
		}
		return math.Inf(1), true
	}
	digits, seenE := 0, false
	for i, c := range body {
		switch {
		case c >= '0' && c <= '9':
			if !seenE {
				digits++
			}
		case c == '.' && !seenE:
		case (c == 'e' || c == 'E') && !seenE && digits > 0:
			seenE = true
		case (c == '+' || c == '-') && i > 0 && (body[i-1] == 'e' || body[i-1] == 'E'):
		default:
			return 0, false
		}
	}
	if digits == 0 || seenE && !(body[len(body)-1] >= '0' && body[len(body)-1] <= '9') {
		return 0, false
	}
	v, err := strconv.ParseFloat(string(b), bits)
	if err != nil {
		if ne, ok := err.(*strconv.NumError); ok && ne.Err == strconv.ErrRange {
			return v, true
		}
		return 0, false
	}
	return v, true
}

// javaDecimal is a BigDecimal: unscaled × 10^-scale.
type javaDecimal struct {
	unscaled big.Int
	scale    int
}

// parse reads b as new BigDecimal(String) does: an optional sign, digits
// with an optional point (at least one digit), and an optional exponent
// with an optional sign. No spaces.
func (d *javaDecimal) parse(b []byte) bool {
	i := 0
	neg := false
	if i < len(b) && (b[i] == '+' || b[i] == '-') {
		neg = b[i] == '-'
		i++
	}
	start := i
	digits := 0
	frac := 0
	point := false
	var small uint64
	useSmall := true
	d.unscaled.SetInt64(0)
	for ; i < len(b); i++ {
		c := b[i]
		if c == '.' {
			if point {
				return false
			}
			point = true
			continue
		}
		if c < '0' || c > '9' {
			break
		}
		digits++
		if point {
			frac++
		}
		if useSmall && small < (math.MaxUint64-9)/10 {
			small = small*10 + uint64(c-'0')
		} else {
			useSmall = false
		}
	}
	if digits == 0 {
		return false
	}
	if useSmall {
		d.unscaled.SetUint64(small)
	} else {
		s := make([]byte, 0, i-start)
		for _, c := range b[start:i] {
			if c != '.' {
				s = append(s, c)
			}
		}
		d.unscaled.SetString(string(s), 10)
	}
	if neg {
		d.unscaled.Neg(&d.unscaled)
	}
	exp := int64(0)
	if i < len(b) {
		if b[i] != 'e' && b[i] != 'E' {
			return false
		}
		e, ok, in := javaParseLong(b[i+1:], math.MinInt32, math.MaxInt32)
		if !ok || !in || len(b[i+1:]) > 0 && b[i+1] == '+' && len(b[i+1:]) == 1 {
			return false
		}
		exp = e
	}
	sc := int64(frac) - exp
	if sc > math.MaxInt32 || sc < math.MinInt32 {
		return false
	}
	d.scale = int(sc)
	return true
}

var bigTen = big.NewInt(10)

// toSQL is DecimalData.fromBigDecimal(d, precision, scale): d rounded to
// scale with RoundingMode.HALF_UP, then refused (fits false: Flink makes the
// value null) when it has more than precision digits. The unscaled value at
// scale is left in out.
func (d *javaDecimal) toSQL(precision, scale int, out *big.Int) (fits bool) {
	out.Set(&d.unscaled)
	if out.Sign() == 0 {
		return true // 0 at any scale (and no 10^2147483647 to compute for 0e-2147483647)
	}
	switch {
	case scale > d.scale:
		if scale-d.scale > 2*assign.SQLMaxDecimalPrecision+2 {
			return false // far more digits than any DECIMAL holds
		}
		out.Mul(out, new(big.Int).Exp(bigTen, big.NewInt(int64(scale-d.scale)), nil))
	case scale < d.scale:
		if d.scale-scale > 400 {
			// |value| < 10^(digits - (d.scale - scale)): rounds to 0 unless
			// the digits reach the rounding position.
			if len(out.String()) < d.scale-scale {
				out.SetInt64(0)
				return true
			}
		}
		p := new(big.Int).Exp(bigTen, big.NewInt(int64(d.scale-scale)), nil)
		neg := out.Sign() < 0
		out.Abs(out)
		var rem big.Int
		out.QuoRem(out, p, &rem)
		if rem.Lsh(&rem, 1).Cmp(p) >= 0 { // HALF_UP
			out.Add(out, big.NewInt(1))
		}
		if neg {
			out.Neg(out)
		}
	}
	// BigDecimal.precision: the digits of the unscaled value (1 for 0).
	var abs big.Int
	abs.Abs(out)
	limit := new(big.Int).Exp(bigTen, big.NewInt(int64(precision)), nil)
	return abs.Cmp(limit) < 0
}

// jacksonText decodes the UTF-8 bytes of a JSON or CSV value into the
// UTF-16 code units of the Java String that Jackson's UTF-8 readers make
// (UTF8StreamJsonParser, the csv module's UTF8Reader): a lead byte
// 0xC0..0xDF starts 2 bytes, 0xE0..0xEF 3 and 0xF0..0xF7 4, each following
// byte must be 10xxxxxx, and the value is not checked further (an encoded
// surrogate stays a lone surrogate). ok is false for bytes Jackson refuses
// ("Invalid UTF-8 start byte", "Invalid UTF-8 middle byte").
func jacksonText(dst assign.JavaString, b []byte) (assign.JavaString, bool) {
	for i := 0; i < len(b); {
		c := b[i]
		if c < 0x80 {
			dst = append(dst, uint16(c))
			i++
			continue
		}
		var n int
		var r rune
		switch {
		case c >= 0xC0 && c <= 0xDF:
			n, r = 2, rune(c&0x1F)
		case c >= 0xE0 && c <= 0xEF:
			n, r = 3, rune(c&0x0F)
		case c >= 0xF0 && c <= 0xF7:
			n, r = 4, rune(c&0x07)
		default:
			return dst, false
		}
		if i+n > len(b) {
			return dst, false
		}
		for j := 1; j < n; j++ {
			if b[i+j]&0xC0 != 0x80 {
				return dst, false
			}
			r = r<<6 | rune(b[i+j]&0x3F)
		}
		if n == 4 {
			r -= 0x10000
			dst = append(dst, uint16(0xD800+(r>>10)), uint16(0xDC00|r&0x3FF))
		} else {
			dst = append(dst, uint16(r))
		}
		i += n
	}
	return dst, true
}

// plainUTF8 reports whether b is UTF-8 that Go and the JDK read alike (no
// surrogate, no overlong form), so that Java's String.getBytes(UTF_8) of the
// decoded text gives b back.
func plainUTF8(b []byte) bool {
	for _, c := range b {
		if c >= 0x80 {
			return utf8.Valid(b)
		}
	}
	return true
}

// javaUTF8 appends String.getBytes(UTF_8) of s: each lone surrogate
// becomes '?'.
func javaUTF8(dst []byte, s assign.JavaString) []byte {
	for i := 0; i < len(s); i++ {
		u := rune(s[i])
		if utf16.IsSurrogate(u) {
			if u < 0xDC00 && i+1 < len(s) && s[i+1] >= 0xDC00 && s[i+1] <= 0xDFFF {
				dst = utf8.AppendRune(dst, utf16.DecodeRune(u, rune(s[i+1])))
				i++
				continue
			}
			dst = append(dst, '?')
			continue
		}
		dst = utf8.AppendRune(dst, u)
	}
	return dst
}

// civilFromDays is LocalDate.ofEpochDay.
func civilFromDays(z int64) (y int64, m, d int) {
	z += 719468
	era := z / 146097
	if z < 0 && z%146097 != 0 {
		era--
	}
	doe := z - era*146097
	yoe := (doe - doe/1460 + doe/36524 - doe/146096) / 365
	y = yoe + era*400
	doy := doe - (365*yoe + yoe/4 - yoe/100)
	mp := (5*doy + 2) / 153
	d = int(doy - (153*mp+2)/5 + 1)
	m = int(mp + 3)
	if m > 12 {
		m -= 12
	}
	if m <= 2 {
		y++
	}
	return y, m, d
}

func isLeap(y int64) bool { return y%4 == 0 && (y%100 != 0 || y%400 == 0) }

func monthDays(y int64, m int) int {
	switch m {
	case 2:
		if isLeap(y) {
			return 29
		}
		return 28
	case 4, 6, 9, 11:
		return 30
	}
	return 31
}
