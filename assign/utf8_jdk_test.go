package assign

import (
	"encoding/hex"
	"math/rand/v2"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode/utf16"
	"unicode/utf8"
)

// hashUnits is String.hashCode over UTF-16 code units.
func hashUnits(us []uint16) int32 {
	var h int32
	for _, u := range us {
		h = 31*h + int32(u)
	}
	return h
}

// TestStringHashCodeInvalidUTF8Table: the JDK 17 decodings the end-to-end
// tier observed (new String(bytes, UTF_8) in Kafka's StringDeserializer),
// plus a few that pin each branch of the ported rule.
func TestStringHashCodeInvalidUTF8Table(t *testing.T) {
	const R = 0xFFFD
	for _, tc := range []struct {
		in   string
		want []uint16
	}{
		// Observed on JDK 17 (Go's per-byte rule differs on these).
		{"\xe2\x82", []uint16{R}},
		{"\xe2\x82\x41", []uint16{R, 'A'}},
		{"\xf0\x9f\x98", []uint16{R}},
		{"\xf0\x9f", []uint16{R}},
		{"\xed\xa0\x80", []uint16{R}},
		{"\xed\xbf\xbf\xed\xa0\x80", []uint16{R, R}},
		// Observed on JDK 17, already one U+FFFD per byte.
		{"\xff", []uint16{R}},
		{"\xc0\x80", []uint16{R, R}},
		{"\xe0\x80\x80", []uint16{R, R, R}},
		{"\xf4\x90\x80\x80", []uint16{R, R, R, R}},
		// One per branch.
		{"", nil},
		{"\xef\xbf\xbd", []uint16{R}},                  // a real U+FFFD
		{"a\xc3", []uint16{'a', R}},                    // 2-byte lead at the end
		{"\xc3A", []uint16{R, 'A'}},                    // 2-byte lead, no continuation
		{"\xe2A\x82", []uint16{R, 'A', R}},             // 3-byte, bad b2: lead alone
		{"\xe0\x9f\xbf", []uint16{R, R, R}},            // overlong E0: lead alone
		{"\xe0\x9f", []uint16{R, R}},                   // overlong E0 at the end
		{"\xed\xa0A", []uint16{R, 'A'}},                // surrogate prefix, bad b3
		{"\xed\xa0", []uint16{R}},                      // surrogate prefix at the end
		{"\xe2\x82\xac", []uint16{0x20AC}},             // €
		{"\xe2A", []uint16{R, 'A'}},                    // truncated, bad b2
		{"\xf0\x9f\x98A", []uint16{R, 'A'}},            // 4-byte, bad b4: b1 b2 b3
		{"\xf0\x9fA\x80", []uint16{R, 'A', R}},         // 4-byte, bad b3: b1 b2
		{"\xf0\x8f\xbf\xbf", []uint16{R, R, R, R}},     // overlong F0
		{"\xf5\x80\x80\x80", []uint16{R, R, R, R}},     // F5 lead
		{"\xf5\x80", []uint16{R, R}},                   // F5 lead, truncated
		{"\xf0\x9fA", []uint16{R, 'A'}},                // truncated, bad b3
		{"\xf0\x8f", []uint16{R, R}},                   // truncated, b2 out of range
		{"\xf4\x90", []uint16{R, R}},                   // truncated, b2 out of range
		{"\xf0", []uint16{R}},                          // lone 4-byte lead
		{"\xf0\x9f\x98\x80", []uint16{0xD83D, 0xDE00}}, // 😀
		{"\xf4\x8f\xbf\xbf", []uint16{0xDBFF, 0xDFFF}}, // U+10FFFF
		{"\xc1\xbf\x80\xf8\x88\x80\x80\x80", []uint16{R, R, R, R, R, R, R, R}},
		{"ok\xe2\x82\xac\xe2\x82", []uint16{'o', 'k', 0x20AC, R}},
	} {
		got := appendJavaUTF16(nil, tc.in)
		if !slices.Equal(got, tc.want) {
			t.Errorf("appendJavaUTF16(% x) = %04x, want %04x", tc.in, got, tc.want)
		}
		if h, want := StringHashCode(tc.in), hashUnits(tc.want); h != want {
			t.Errorf("StringHashCode(% x) = %d, want %d", tc.in, h, want)
		}
	}
}

// jdkDecodeLiteral is a line-by-line transliteration of JDK 17
// String.decodeUTF8_UTF16(src, 0, len, dst, 0, doReplace = true) and its
// helpers, in Java's signed-byte int arithmetic, kept apart from
// appendJavaUTF16 (which is written over unsigned bytes) so the fuzz test
// can compare the two on any input.
func jdkDecodeLiteral(s string) []uint16 {
	const REPL = 0xFFFD
	src := make([]int, len(s))
	for i := range len(s) {
		src[i] = int(int8(s[i])) // Java byte
	}
	isNotContinuation := func(b int) bool { return (b & 0xc0) != 0x80 }
	isMalformed3 := func(b1, b2, b3 int) bool {
		return (b1 == -32 && (b2&0xe0) == 0x80) || (b2&0xc0) != 0x80 || (b3&0xc0) != 0x80
	}
	isMalformed3_2 := func(b1, b2 int) bool { return (b1 == -32 && (b2&0xe0) == 0x80) || (b2&0xc0) != 0x80 }
	isMalformed4 := func(b2, b3, b4 int) bool { return (b2&0xc0) != 0x80 || (b3&0xc0) != 0x80 || (b4&0xc0) != 0x80 }
	isMalformed4_2 := func(b1, b2 int) bool {
		return (b1 == 0xf0 && (b2 < 0x90 || b2 > 0xbf)) || (b1 == 0xf4 && (b2&0xf0) != 0x80) || (b2&0xc0) != 0x80
	}
	isMalformed4_3 := func(b3 int) bool { return (b3 & 0xc0) != 0x80 }
	decode2 := func(b1, b2 int) uint16 { return uint16(int32(((b1 << 6) ^ b2) ^ ((-64 << 6) ^ (-128 << 0)))) }
	decode3 := func(b1, b2, b3 int) uint16 {
		return uint16(int32((b1 << 12) ^ (b2 << 6) ^ (b3 ^ ((-32 << 12) ^ (-128 << 6) ^ (-128 << 0)))))
	}
	decode4 := func(b1, b2, b3, b4 int) int32 {
		return int32((b1 << 18) ^ (b2 << 12) ^ (b3 << 6) ^ (b4 ^ ((-16 << 18) ^ (-128 << 12) ^ (-128 << 6) ^ (-128 << 0))))
	}
	malformed3 := func(sp int) int {
		b1 := src[sp]
		sp++
		b2 := src[sp]
		if (b1 == -32 && (b2&0xe0) == 0x80) || isNotContinuation(b2) {
			return 1
		}
		return 2
	}
	malformed4 := func(sp int) int {
		b1 := src[sp] & 0xff
		sp++
		b2 := src[sp] & 0xff
		sp++
		if b1 > 0xf4 || (b1 == 0xf0 && (b2 < 0x90 || b2 > 0xbf)) || (b1 == 0xf4 && (b2&0xf0) != 0x80) || isNotContinuation(b2) {
			return 1
		}
		if isNotContinuation(src[sp]) {
			return 2
		}
		return 3
	}
	var dst []uint16
	sp, sl := 0, len(src)
	for sp < sl {
		b1 := src[sp]
		sp++
		if b1 >= 0 {
			dst = append(dst, uint16(b1))
		} else if (b1>>5) == -2 && (b1&0x1e) != 0 {
			if sp < sl {
				b2 := src[sp]
				sp++
				if isNotContinuation(b2) {
					dst = append(dst, REPL)
					sp--
				} else {
					dst = append(dst, decode2(b1, b2))
				}
				continue
			}
			dst = append(dst, REPL)
			break
		} else if (b1 >> 4) == -2 {
			if sp+1 < sl {
				b2 := src[sp]
				sp++
				b3 := src[sp]
				sp++
				if isMalformed3(b1, b2, b3) {
					dst = append(dst, REPL)
					sp -= 3
					sp += malformed3(sp)
				} else {
					c := decode3(b1, b2, b3)
					if c >= 0xd800 && c <= 0xdfff {
						dst = append(dst, REPL)
					} else {
						dst = append(dst, c)
					}
				}
				continue
			}
			if sp < sl && isMalformed3_2(b1, src[sp]) {
				dst = append(dst, REPL)
				continue
			}
			dst = append(dst, REPL)
			break
		} else if (b1 >> 3) == -2 {
			if sp+2 < sl {
				b2 := src[sp]
				sp++
				b3 := src[sp]
				sp++
				b4 := src[sp]
				sp++
				uc := decode4(b1, b2, b3, b4)
				if isMalformed4(b2, b3, b4) || !(uc >= 0x10000 && uc < 0x110000) {
					dst = append(dst, REPL)
					sp -= 4
					sp += malformed4(sp)
				} else {
					dst = append(dst, uint16(0xd800+((uc-0x10000)>>10)), uint16(0xdc00+(uc&0x3ff)))
				}
				continue
			}
			b1 &= 0xff
			if b1 > 0xf4 || sp < sl && isMalformed4_2(b1, src[sp]&0xff) {
				dst = append(dst, REPL)
				continue
			}
			sp++
			dst = append(dst, REPL)
			if sp < sl && isMalformed4_3(src[sp]) {
				continue
			}
			break
		} else {
			dst = append(dst, REPL)
		}
	}
	return dst
}

// jdkUTF8Cases generates byte strings, mostly not valid UTF-8, that walk
// every branch of decodeUTF8_UTF16: every 1-4 byte prefix of interesting
// sequences alone, after ASCII, before ASCII, before continuation bytes and
// before each other; a grid of lead x second x third bytes; mutations and
// truncations of valid multibyte text; and random bytes.
func jdkUTF8Cases() []string {
	seen := map[string]bool{}
	var cases []string
	add := func(s string) {
		if !seen[s] {
			seen[s] = true
			cases = append(cases, s)
		}
	}
	interesting := []string{
		"\xc0\x80", "\xc1\xbf", "\xe0\x80\x80", "\xe0\x9f\xbf", "\xf0\x80\x80\x80", "\xf0\x8f\xbf\xbf", // overlong
		"\xed\xa0\x80", "\xed\xaf\xbf", "\xed\xb0\x80", "\xed\xbf\xbf", // surrogates
		"\xf4\x90\x80\x80", "\xf5\x80\x80\x80", "\xf7\xbf\xbf\xbf", "\xf8\x88\x80\x80", "\xfc\x84\x80\x80", "\xfe", "\xff", // > U+10FFFF, bad leads
		"\x80", "\xbf", "\x80\x80\x80\x80", // lone continuation bytes
		"\xc2\x80", "\xdf\xbf", "\xe0\xa0\x80", "\xed\x9f\xbf", "\xee\x80\x80", "\xef\xbf\xbd", "\xef\xbf\xbf", // valid edges
		"\xf0\x90\x80\x80", "\xf0\x9f\x98\x80", "\xf3\xbf\xbf\xbf", "\xf4\x80\x80\x80", "\xf4\x8f\xbf\xbf",
		"\xe2\x82\xac", "\xc3\xa9",
	}
	var prefixes []string
	for _, s := range interesting {
		for n := 1; n <= min(4, len(s)); n++ {
			prefixes = append(prefixes, s[:n])
		}
	}
	for _, p := range prefixes {
		for _, ctx := range [][2]string{{"", ""}, {"a", ""}, {"", "a"}, {"a", "b"}, {"", "\x80"}, {"", "\x80\x80"}, {"", "é"}, {"", "€"}, {"", "😀"}, {"😀", ""}} {
			add(ctx[0] + p + ctx[1])
		}
	}
	r := rand.New(rand.NewPCG(17, 0x10FFFF))
	for range 600 {
		add(prefixes[r.IntN(len(prefixes))] + prefixes[r.IntN(len(prefixes))])
	}
	for range 300 {
		add(prefixes[r.IntN(len(prefixes))] + prefixes[r.IntN(len(prefixes))] + prefixes[r.IntN(len(prefixes))])
	}
	// Lead x second x (third) byte grid, alone and before "\x80" and "A".
	leads := []byte{0xc1, 0xc2, 0xdf, 0xe0, 0xe1, 0xed, 0xee, 0xef, 0xf0, 0xf1, 0xf4, 0xf5, 0xf7, 0xf8}
	seconds := []byte{0x00, 0x41, 0x7f, 0x80, 0x8f, 0x90, 0x9f, 0xa0, 0xbf, 0xc0, 0xc2, 0xe0, 0xf0, 0xff}
	thirds := []string{"", "\x41", "\x80", "\xbf", "\xc2", "\x80\x80", "\x80A", "A\x80"}
	for _, b1 := range leads {
		for _, b2 := range seconds {
			for _, rest := range thirds {
				add(string([]byte{b1, b2}) + rest)
			}
		}
	}
	// Mutations and truncations of valid multibyte text.
	runeFrom := func() rune {
		switch r.IntN(6) {
		case 0:
			return rune(0x20 + r.IntN(0x5f))
		case 1:
			return rune(0x80 + r.IntN(0x780))
		case 2:
			return rune(0x800 + r.IntN(0xd800-0x800))
		case 3:
			return rune(0xe000 + r.IntN(0x2000))
		case 4:
			return rune(0x10000 + r.IntN(0x100000))
		default:
			return []rune{0xFFFD, 0xD7FF, 0xE000, 0xFFFF, 0x10000, 0x10FFFF, 0x7FF, 0x800}[r.IntN(8)]
		}
	}
	for range 1500 {
		var b []byte
		for range 1 + r.IntN(5) {
			b = utf8.AppendRune(b, runeFrom())
		}
		for range 1 + r.IntN(3) {
			if len(b) == 0 {
				break
			}
			i := r.IntN(len(b))
			switch r.IntN(6) {
			case 0: // truncate at the end
				b = b[:i]
			case 1: // delete a byte in the middle
				b = append(b[:i], b[i+1:]...)
			case 2: // replace a byte
				b[i] = byte(r.IntN(256))
			case 3: // replace with a continuation byte
				b[i] = byte(0x80 + r.IntN(0x40))
			case 4: // insert a lead or continuation byte
				c := []byte{0x80, 0xbf, 0xc2, 0xe0, 0xed, 0xf0, 0xf4, 0xf5, 0xff}[r.IntN(9)]
				b = append(b[:i], append([]byte{c}, b[i:]...)...)
			default: // cut a multibyte character in the middle of the text
				j := i + r.IntN(len(b)-i)
				b = append(b[:i], b[j:]...)
			}
		}
		add(string(b))
	}
	// Random bytes, biased towards the bytes that matter.
	alphabet := []byte{0x00, 0x41, 0x7f, 0x80, 0x8f, 0x90, 0x9f, 0xa0, 0xbf, 0xc0, 0xc1, 0xc2, 0xdf, 0xe0, 0xed, 0xef, 0xf0, 0xf4, 0xf5, 0xf7, 0xf8, 0xff}
	for len(cases) < 5000 {
		b := make([]byte, 1+r.IntN(10))
		for i := range b {
			if r.IntN(3) == 0 {
				b[i] = byte(r.IntN(256))
			} else {
				b[i] = alphabet[r.IntN(len(alphabet))]
			}
		}
		add(string(b))
	}
	return cases
}

// TestStringHashCodeMatchesJDKOnInvalidUTF8 decodes ~5,000 byte strings,
// nearly all invalid UTF-8, with the real new String(bytes, UTF_8)
// (testdata/Utf8Decode.java, one JVM) and requires StringHashCode and
// appendJavaUTF16 to match its hashCode and UTF-16 units exactly.
func TestStringHashCodeMatchesJDKOnInvalidUTF8(t *testing.T) {
	java, err := exec.LookPath("java")
	if err != nil {
		t.Fatalf("java is not on PATH: this test needs Java 17 or newer, whose own new String(bytes, UTF_8) is the reference "+
			"(make test needs it installed; on Debian: apt-get install openjdk-17-jdk-headless): %v", err)
	}
	cases := jdkUTF8Cases()
	var in strings.Builder
	invalid := 0
	for _, c := range cases {
		in.WriteString(hex.EncodeToString([]byte(c)))
		in.WriteByte('\n')
		if !utf8.ValidString(c) {
			invalid++
		}
	}
	start := time.Now()
	cmd := exec.Command(java, filepath.Join("testdata", "Utf8Decode.java"))
	cmd.Stdin = strings.NewReader(in.String())
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("java testdata/Utf8Decode.java: %v\n%s", err, stderr.String())
	}
	lines := strings.Split(strings.TrimSuffix(string(out), "\n"), "\n")
	if len(lines) != len(cases) {
		t.Fatalf("Utf8Decode.java answered %d lines for %d cases", len(lines), len(cases))
	}
	bad := 0
	for i, c := range cases {
		f := strings.Fields(lines[i])
		if len(f) == 0 {
			t.Fatalf("Utf8Decode.java: empty line %d", i)
		}
		jh, err := strconv.ParseInt(f[0], 10, 32)
		if err != nil {
			t.Fatalf("Utf8Decode.java line %q: %v", lines[i], err)
		}
		var ju []uint16
		for _, x := range f[1:] {
			u, err := strconv.ParseUint(x, 16, 16)
			if err != nil {
				t.Fatalf("Utf8Decode.java line %q: %v", lines[i], err)
			}
			ju = append(ju, uint16(u))
		}
		gu, gh := appendJavaUTF16(nil, c), StringHashCode(c)
		if !slices.Equal(gu, ju) || gh != int32(jh) || hashUnits(ju) != int32(jh) {
			if bad++; bad <= 20 {
				t.Errorf("% x: JDK %d %04x, StringHashCode %d, appendJavaUTF16 %04x", c, jh, ju, gh, gu)
			}
		}
	}
	if bad > 0 {
		t.Fatalf("%d of %d byte strings decode differently from the JDK", bad, len(cases))
	}
	t.Logf("%d byte strings (%d not valid UTF-8) match the JDK's new String(bytes, UTF_8) (JVM %v)",
		len(cases), invalid, time.Since(start).Round(time.Millisecond))
}

// TestJDKDecodeLiteralAgreesOnCases keeps the fuzz reference honest: the
// transliteration must agree with appendJavaUTF16 on the JDK-checked cases
// without a JVM, and with utf16.Encode on valid input.
func TestJDKDecodeLiteralAgreesOnCases(t *testing.T) {
	for _, c := range jdkUTF8Cases() {
		if got, want := jdkDecodeLiteral(c), appendJavaUTF16(nil, c); !slices.Equal(got, want) {
			t.Fatalf("% x: literal %04x, appendJavaUTF16 %04x", c, got, want)
		}
		if utf8.ValidString(c) {
			if got, want := appendJavaUTF16(nil, c), utf16.Encode([]rune(c)); !slices.Equal(got, want) {
				t.Fatalf("%q: appendJavaUTF16 %04x, utf16.Encode %04x", c, got, want)
			}
		}
	}
}

// TestJavaText: JavaText is the JDK's decoding as Go text, so that it
// hashes like the bytes it came from and is valid UTF-8.
func TestJavaText(t *testing.T) {
	for _, c := range jdkUTF8Cases() {
		got := JavaText(c)
		if want := string(utf16.Decode(appendJavaUTF16(nil, c))); got != want {
			t.Fatalf("JavaText(% x) = %q, want %q", c, got, want)
		}
		if !utf8.ValidString(got) || StringHashCode(got) != StringHashCode(c) {
			t.Fatalf("JavaText(% x) = %q: valid %t, hash %d, want hash %d", c, got, utf8.ValidString(got), StringHashCode(got), StringHashCode(c))
		}
	}
}
