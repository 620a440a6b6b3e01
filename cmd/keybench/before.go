package main

import (
	"math/bits"
	"runtime"
	"time"
)

// The String key → key group path as assign had it before the 8-byte
// hashing and the branch-free murmur fold (commit 0d90a98), for ASCII
// keys (benchKeys' are): one multiply-add per byte, murmurHash with
// Flink's branches, then a division. keybench times it beside today's, in
// the same rounds, so that make bench prints before and after.
func beforeStringHashCode(s string) int32 {
	var h int32
	for i := 0; i < len(s); i++ {
		h = 31*h + int32(s[i])
	}
	return h
}

func beforeMurmurHash(code int32) int32 {
	k := uint32(code)
	k *= 0xcc9e2d51
	k = bits.RotateLeft32(k, 15)
	k *= 0x1b873593
	h := bits.RotateLeft32(k, 13)
	h = h*5 + 0xe6546b64
	h ^= 4
	h ^= h >> 16
	h *= 0x85ebca6b
	h ^= h >> 13
	h *= 0xc2b2ae35
	h ^= h >> 16
	switch m := int32(h); {
	case m >= 0:
		return m
	case m != -1<<31:
		return -m
	default:
		return 0
	}
}

// timeBefore is timeSingle over the old path.
func timeBefore(keys []string, maxP, warmup, passes int) ([]float64, int64) {
	var out []float64
	var sum int64
	for pass := range warmup + passes {
		runtime.GC()
		start := time.Now()
		var s int64
		for _, k := range keys {
			s += int64(beforeMurmurHash(beforeStringHashCode(k)) % int32(maxP))
		}
		d := time.Since(start)
		sum = s
		if pass >= warmup {
			out = append(out, float64(d.Nanoseconds())/float64(len(keys)))
		}
	}
	return out, sum
}
