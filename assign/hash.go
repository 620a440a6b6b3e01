package assign

import (
	"math/bits"
	"unicode/utf16"
)

// StringHashCode returns Java's String.hashCode for s.
//
// Java hashes UTF-16 code units, s[0]*31^(n-1) + ... + s[n-1] in int
// arithmetic, so a character outside the Basic Multilingual Plane (an emoji,
// say) contributes its two surrogates. s must be valid UTF-8; invalid bytes
// are hashed as U+FFFD, which is what a JVM decoding the same bytes would see.
//
// Mirrors java.lang.String.hashCode (JDK 17, StringLatin1/StringUTF16.hashCode).
func StringHashCode(s string) int32 {
	var h int32
	for _, r := range s {
		if r < 0x10000 {
			h = 31*h + int32(r)
			continue
		}
		hi, lo := utf16.EncodeRune(r)
		h = 31*h + int32(hi)
		h = 31*h + int32(lo)
	}
	return h
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
// itself) becomes 0.
func foldNonNegative(h int32) int32 {
	switch {
	case h >= 0:
		return h
	case h != -1<<31:
		return -h
	default:
		return 0
	}
}
