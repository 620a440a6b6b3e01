package assign

import (
	"math/bits"
	"unicode/utf16"
	"unicode/utf8"
)

// StringHashCode returns Java's String.hashCode for the string a JVM builds
// from the bytes of s with new String(bytes, StandardCharsets.UTF_8), which
// is what Kafka's StringDeserializer does with a record key.
//
// Java hashes UTF-16 code units, s[0]*31^(n-1) + ... + s[n-1] in int
// arithmetic, so a character outside the Basic Multilingual Plane (an emoji,
// say) contributes its two surrogates.
//
// Bytes that are not valid UTF-8 are decoded exactly as JDK 17 decodes them,
// which is not Go's one-U+FFFD-per-byte rule (appendJavaUTF16 gives the
// rule byte by byte, with its JDK source). Each malformed sequence becomes
// one U+FFFD, where a malformed sequence is:
//   - a byte that cannot start a sequence (80-BF, C0, C1, F5-FF), alone;
//   - a lead byte alone when the next byte is not a continuation byte
//     (80-BF) or is out of range for that lead (E0 80-9F, F0 80-8F,
//     F4 90-BF);
//   - otherwise the lead with its continuation bytes up to, not including,
//     the first one that is missing or is not a continuation byte, so a
//     sequence cut short by the end of the input takes all of it;
//   - a UTF-8-encoded surrogate (ED A0 80 to ED BF BF), all three bytes.
//
// So E2 82 is one U+FFFD (Go: two), E2 82 41 is U+FFFD 'A', F0 9F 98 and
// F0 9F are one each, ED A0 80 is one (Go: three), ED A0 41 is U+FFFD 'A',
// while FF, C0 80 (two), E0 80 80 (three) and F4 90 80 80 (four) are one
// U+FFFD per byte in both.
//
// ASCII is hashed eight bytes at a time (hashASCII8); from the first 8-byte
// block that holds a byte of 0x80 or more on, valid UTF-8 (a real U+FFFD,
// EF BF BD, included) is hashed rune by rune, and only from the first
// invalid byte on does the port of the JDK decoder run. Every path gives
// the value of the one-unit-at-a-time loop: int arithmetic wraps modulo
// 2^32, so 31*h + c applied eight times equals h*31^8 + the block's sum of
// c_j*31^(7-j), whatever the order of the additions.
//
// Mirrors java.lang.String.hashCode (JDK 17, StringLatin1/StringUTF16.hashCode;
// JDK 21 and later compute the same value with ArraysSupport.vectorizedHashCode)
// of java.lang.String(byte[], Charset) with UTF_8 (JDK 17,
// String.decodeUTF8_UTF16 with doReplace = true).
func StringHashCode(s string) int32 {
	n := len(s)
	if n < 8 {
		return hashShort(s)
	}
	var h uint32
	i := 0
	for ; n-i > 24; i += 8 {
		w := load64(s[i : i+8])
		if w&highBits != 0 {
			return hashUTF8(int32(h), s[i:])
		}
		h = h*pow31x8 + hashASCII8(w)
	}
	// 8 to 24 bytes are left: s[i:i+8], the a (0..8) after it and the b
	// (0..8) after those, read as three windows of 8 that may overlap, each
	// cleared below its new bytes. No branch depends on the length, whose
	// few values a key set mixes too evenly for a predictor, and the
	// multiplications by powers of 31 run side by side.
	rem := n - i
	a := min(rem-8, 8)
	b := rem - 8 - a
	w0 := load64(s[i : i+8])
	w1 := load64(s[i+a : i+a+8])
	w2 := load64(s[n-8:])
	if (w0|w1|w2)&highBits != 0 {
		return hashUTF8(int32(h), s[i:])
	}
	pb := pow31[b]
	pab := pow31[a] * pb
	h = h*pow31x8*pab + hashASCII8(w0)*pab + hashASCII8(topBytes(w1, a))*pb + hashASCII8(topBytes(w2, b))
	return int32(h)
}

// topBytes keeps the top k (0..8) bytes of w and clears the others; a zero
// byte adds nothing to hashASCII8.
func topBytes(w uint64, k int) uint64 {
	return w &^ (1<<uint(8*(8-k)) - 1) // k = 0: 1<<64 is 0 in Go, so all bits clear
}

// hashShort is StringHashCode for len(s) < 8: the bytes gathered into one
// word, at its top, with two (possibly overlapping) 4-byte loads or, for 1
// to 3 bytes, the first, middle and last byte.
func hashShort(s string) int32 {
	n := len(s)
	var w uint64
	switch {
	case n >= 4:
		w = uint64(load32(s[:4])) | uint64(load32(s[n-4:]))<<(8*(n-4))
	case n > 0:
		w = uint64(s[0]) | uint64(s[n/2])<<(8*(n/2)) | uint64(s[n-1])<<(8*(n-1))
	default:
		return 0
	}
	if w&highBits != 0 {
		return hashUTF8(0, s)
	}
	return int32(hashASCII8(w << (uint(8*(8-n)) & 63)))
}

// highBits has the top bit of each byte of a word: w&highBits == 0 exactly
// when the 8 bytes of w are ASCII.
const highBits = 0x8080808080808080

// pow31 holds 31^k modulo 2^32, as Java int arithmetic computes it, for
// k <= 8; pow31x4 and pow31x8 are 31^4 and 31^8 as constants.
var pow31 = [9]uint32{1, 31, 961, 29791, 923521, 28629151, 887503681, 1742810335, pow31x8}

const (
	pow31x4 = 923521
	pow31x8 = 2487512833
)

// hashASCII8 returns c_0*31^7 + c_1*31^6 + ... + c_7 modulo 2^32 for the 8
// bytes of w, c_0 the lowest (the first in the string), each below 0x80:
// adjacent bytes are combined in 16-bit lanes (at most 127*31+127), then
// pairs of those in 32-bit lanes (at most 4064*961+4064), so no lane
// carries into the next, and the two halves last.
func hashASCII8(w uint64) uint32 {
	w = (w&0x00ff00ff00ff00ff)*31 + (w>>8)&0x00ff00ff00ff00ff
	w = (w&0x0000ffff0000ffff)*961 + (w>>16)&0x0000ffff0000ffff
	return uint32(w)*pow31x4 + uint32(w>>32)
}

// load64 reads the 8 bytes of s (len(s) >= 8) as a little-endian word, one
// load after the compiler combines the byte reads.
func load64(s string) uint64 {
	_ = s[7]
	return uint64(s[0]) | uint64(s[1])<<8 | uint64(s[2])<<16 | uint64(s[3])<<24 |
		uint64(s[4])<<32 | uint64(s[5])<<40 | uint64(s[6])<<48 | uint64(s[7])<<56
}

// load32 reads the 4 bytes of s (len(s) >= 4) as a little-endian word.
func load32(s string) uint32 {
	_ = s[3]
	return uint32(s[0]) | uint32(s[1])<<8 | uint32(s[2])<<16 | uint32(s[3])<<24
}

// hashUTF8 continues a String.hashCode of h over s rune by rune while s is
// valid UTF-8 (a real U+FFFD, EF BF BD, included), and from its first
// invalid byte (RuneError of size 1) over the JDK's decoding of the rest.
func hashUTF8(h int32, s string) int32 {
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			h = 31*h + int32(c)
			i++
			continue
		}
		r, n := utf8.DecodeRuneInString(s[i:])
		if n == 1 {
			return hashJavaDecoded(h, s[i:])
		}
		i += n
		if r < 0x10000 {
			h = 31*h + int32(r)
			continue
		}
		r -= 0x10000 // a surrogate pair, as utf16.EncodeRune
		h = 31*h + (0xD800 + int32(r>>10))
		h = 31*h + (0xDC00 + int32(r&0x3FF))
	}
	return h
}

// hashJavaDecoded continues a String.hashCode of h over the UTF-16 units of
// new String(bytes, UTF_8) for the bytes of s.
func hashJavaDecoded(h int32, s string) int32 {
	var buf [64]uint16
	for _, u := range appendJavaUTF16(buf[:0], s) {
		h = 31*h + int32(u)
	}
	return h
}

// appendJavaUTF16 appends to dst the UTF-16 code units of
// new String(bytes, StandardCharsets.UTF_8) for the bytes of s, and returns
// the extended slice. For valid UTF-8 this is utf16.Encode([]rune(s)); it is
// the one place in this package that knows how Java replaces malformed
// input, so code that compares or hashes Java strings built from arbitrary
// bytes should use it rather than []rune(s).
//
// A port of JDK 17 java.base/java/lang/String.java (line numbers from the
// 17.0.21 src.zip): the constructor String(byte[], int, int, Charset) (L521,
// reached from String(byte[], Charset), L1386) takes, for UTF_8.INSTANCE, a
// Latin-1 fast path for ASCII and C2/C3 pairs (the same result) and
// otherwise decodeUTF8_UTF16(..., doReplace = true) (L1099) with
// isNotContinuation, isMalformed3, isMalformed3_2, isMalformed4,
// isMalformed4_2, isMalformed4_3 (L1044-1071), malformed3 (L1219) and
// malformed4 (L1226). These methods are unchanged in JDK 25, and
// -XX:-CompactStrings (no Latin-1 fast path) decodes the same. Its rule, with b1 the
// byte being decoded and "continuation" meaning 80-BF:
//
//   - 00-7F: itself.
//   - C2-DF: with a continuation byte after it, the two decode to a char; with
//     another byte after it, U+FFFD for b1 alone and that byte is decoded
//     afresh; at the end of the input, U+FFFD.
//   - E0-EF with at least two bytes after it: if b2 b3 are continuation bytes
//     (and b2 >= A0 after E0), they decode to a char, or to one U+FFFD for all
//     three if that char is a surrogate (D800-DFFF, i.e. ED A0-BF xx).
//     Otherwise one U+FFFD for b1 alone when b2 is not a continuation byte
//     or is an overlong E0 80-9F (malformed3 = 1), else for b1 b2 (= 2); the
//     next byte is then decoded afresh.
//   - E0-EF with one byte after it: U+FFFD for b1 alone if that byte is not a
//     continuation byte or is an overlong E0 80-9F, and the byte is decoded
//     afresh; otherwise one U+FFFD for both (surrogate prefixes ED A0-BF
//     included). With no byte after it: U+FFFD.
//   - F0-F7 with at least three bytes after it: if b2 b3 b4 are continuation
//     bytes and the code point is U+10000-U+10FFFF, a surrogate pair.
//     Otherwise one U+FFFD for b1 alone when b1 > F4, or b2 is out of range
//     (F0: not 90-BF, F4: not 80-8F, else not a continuation byte); else for
//     b1 b2 when b3 is not a continuation byte; else for b1 b2 b3 (malformed4);
//     the next byte is then decoded afresh.
//   - F0-F7 with two or fewer bytes after it: U+FFFD for b1 alone when b1 > F4
//     or b2 (if any) is out of range as above, and b2 is decoded afresh;
//     otherwise one U+FFFD for b1 b2, and a b3 that is a continuation byte
//     goes into it too, while any other b3 is decoded afresh.
//   - 80-BF, C0, C1, F8-FF: U+FFFD for b1 alone.
func appendJavaUTF16(dst []uint16, s string) []uint16 {
	const repl = 0xFFFD
	isCont := func(b byte) bool { return b&0xC0 == 0x80 }
	n := len(s)
	for i := 0; i < n; {
		b1 := s[i]
		i++
		switch {
		case b1 < 0x80:
			dst = append(dst, uint16(b1))
		case b1 >= 0xC2 && b1 <= 0xDF:
			if i == n {
				return append(dst, repl)
			}
			if b2 := s[i]; isCont(b2) {
				dst = append(dst, uint16(b1&0x1F)<<6|uint16(b2&0x3F))
				i++
			} else {
				dst = append(dst, repl)
			}
		case b1 >= 0xE0 && b1 <= 0xEF:
			// isMalformed3_2 / the first test of malformed3.
			bad2 := func(b2 byte) bool { return b1 == 0xE0 && b2&0xE0 == 0x80 || !isCont(b2) }
			if i+1 < n {
				b2, b3 := s[i], s[i+1]
				switch {
				case bad2(b2):
					dst = append(dst, repl) // malformed3 = 1
				case !isCont(b3):
					dst = append(dst, repl) // malformed3 = 2
					i++
				default:
					c := uint16(b1&0x0F)<<12 | uint16(b2&0x3F)<<6 | uint16(b3&0x3F)
					if c >= 0xD800 && c <= 0xDFFF {
						c = repl
					}
					dst = append(dst, c)
					i += 2
				}
				continue
			}
			if i < n && bad2(s[i]) {
				dst = append(dst, repl)
				continue
			}
			return append(dst, repl) // the rest of the input
		case b1 >= 0xF0 && b1 <= 0xF7:
			// isMalformed4_2 / the first test of malformed4.
			bad2 := func(b2 byte) bool {
				return b1 > 0xF4 ||
					b1 == 0xF0 && (b2 < 0x90 || b2 > 0xBF) ||
					b1 == 0xF4 && b2&0xF0 != 0x80 ||
					!isCont(b2)
			}
			if i+2 < n {
				b2, b3, b4 := s[i], s[i+1], s[i+2]
				uc := rune(b1&0x07)<<18 | rune(b2&0x3F)<<12 | rune(b3&0x3F)<<6 | rune(b4&0x3F)
				if isCont(b2) && isCont(b3) && isCont(b4) && uc >= 0x10000 && uc <= 0x10FFFF {
					hi, lo := utf16.EncodeRune(uc)
					dst = append(dst, uint16(hi), uint16(lo))
					i += 3
					continue
				}
				dst = append(dst, repl)
				switch {
				case bad2(b2): // malformed4 = 1
				case !isCont(b3): // malformed4 = 2
					i++
				default: // malformed4 = 3
					i += 2
				}
				continue
			}
			if b1 > 0xF4 || i < n && bad2(s[i]) {
				dst = append(dst, repl)
				continue
			}
			dst = append(dst, repl) // b1 b2
			i++
			if i < n && !isCont(s[i]) {
				continue
			}
			return dst // a continuation b3 is the last byte: swallowed
		default:
			dst = append(dst, repl)
		}
	}
	return dst
}

// IntHashCode returns Java's Integer.hashCode: the value itself.
// Short and Byte hash the same way after sign extension.
func IntHashCode(v int32) int32 { return v }

// LongHashCode returns Java's Long.hashCode: (int)(v ^ (v >>> 32)).
func LongHashCode(v int64) int32 {
	u := uint64(v)
	return int32(uint32(u ^ (u >> 32)))
}

// BooleanHashCode returns Java's Boolean.hashCode: 1231 for true, 1237 for false.
func BooleanHashCode(v bool) int32 {
	if v {
		return 1231
	}
	return 1237
}

// TupleHashCode returns the hashCode of a Flink TupleN whose fields have the
// given hash codes (0 for a null field).
//
// Mirrors org.apache.flink.api.java.tuple.Tuple2.hashCode (and Tuple3..Tuple25,
// which continue the same pattern): the seed is the first field's hash, not 1,
// then result = 31*result + hash(field) for each further field. Tuple0 hashes
// to 0 and Tuple1(x) to x.hashCode().
func TupleHashCode(fields ...int32) int32 {
	if len(fields) == 0 {
		return 0
	}
	h := fields[0]
	for _, f := range fields[1:] {
		h = 31*h + f
	}
	return h
}

// MurmurHash is Flink's MathUtils.murmurHash(int): MurmurHash3_x86_32 of one
// 4-byte block with seed 0, followed by a fold onto non-negative ints.
//
// Mirrors flink-core/src/main/java/org/apache/flink/util/MathUtils.java,
// murmurHash (L137) and bitMix (L194), blob a45eb0398969.
func MurmurHash(code int32) int32 {
	k := uint32(code)
	k *= 0xcc9e2d51
	k = bits.RotateLeft32(k, 15)
	k *= 0x1b873593

	h := bits.RotateLeft32(k, 13) // seed 0: h = 0 ^ k
	h = h*5 + 0xe6546b64
	h ^= 4 // length in bytes
	return foldNonNegative(int32(bitMix(h)))
}

// bitMix is Murmur3's fmix32, as in MathUtils.bitMix.
func bitMix(h uint32) uint32 {
	h ^= h >> 16
	h *= 0x85ebca6b
	h ^= h >> 13
	h *= 0xc2b2ae35
	h ^= h >> 16
	return h
}

// foldNonNegative is the tail of MathUtils.murmurHash: a non-negative value is
// kept, a negative one is negated, and Integer.MIN_VALUE (whose negation is
// itself) becomes 0. It computes that without a branch, whose direction
// would be the sign of a hash, which no predictor can learn: a = |h| with
// int wrapping (MIN_VALUE stays MIN_VALUE), then a cleared when still
// negative.
func foldNonNegative(h int32) int32 {
	sign := h >> 31
	a := (h ^ sign) - sign
	return a &^ (a >> 31)
}
