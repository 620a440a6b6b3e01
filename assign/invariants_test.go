package assign

import (
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"unicode/utf16"
	"unicode/utf8"
)

// TestRangesTile checks, for every maxP up to 200 and a sample of larger
// ones, that the ranges of all subtasks tile 0..maxP-1 in order, that sizes
// are floor or ceil of maxP/p, and that OperatorIndex agrees with the ranges.
func TestRangesTile(t *testing.T) {
	check := func(maxP, p int) {
		rs, err := KeyGroupRanges(maxP, p)
		if err != nil {
			t.Fatalf("KeyGroupRanges(%d, %d): %v", maxP, p, err)
		}
		next := 0
		for i, r := range rs {
			if r.Start != next {
				t.Fatalf("KeyGroupRanges(%d, %d)[%d].Start = %d, want %d", maxP, p, i, r.Start, next)
			}
			if s := r.Size(); s != maxP/p && s != (maxP+p-1)/p {
				t.Fatalf("KeyGroupRanges(%d, %d)[%d] has %d key groups, want %d or %d", maxP, p, i, s, maxP/p, (maxP+p-1)/p)
			}
			for _, kg := range []int{r.Start, r.End, (r.Start + r.End) / 2} {
				if op := OperatorIndex(maxP, p, kg); op != i {
					t.Fatalf("OperatorIndex(%d, %d, %d) = %d, want %d (range %v)", maxP, p, kg, op, i, r)
				}
			}
			next = r.End + 1
		}
		if next != maxP {
			t.Fatalf("KeyGroupRanges(%d, %d) end at %d, want %d", maxP, p, next-1, maxP-1)
		}
	}
	for maxP := 1; maxP <= 200; maxP++ {
		for p := 1; p <= maxP; p++ {
			check(maxP, p)
		}
	}
	r := rand.New(rand.NewPCG(1, 2))
	for range 2000 {
		maxP := 1 + r.IntN(UpperBoundMaxParallelism)
		check(maxP, 1+r.IntN(maxP))
	}
	check(32768, 32768)
	check(32768, 32767)
}

// TestFreshAssignmentOneOwner checks that every partition of every topic has
// exactly one owner, that it is KafkaSplitOwner's, and that within one topic
// the counts per subtask differ by at most one.
func TestFreshAssignmentOneOwner(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for range 300 {
		topics := randomTopics(r, 1+r.IntN(6), 1+r.IntN(64))
		p := 1 + r.IntN(100)
		a, err := FreshAssignment(topics, p)
		if err != nil {
			t.Fatal(err)
		}
		seen := map[TopicPartition]int{}
		for i, ps := range a.Subtasks {
			for _, tp := range ps {
				seen[tp]++
				if o, ok := a.OwnerOf(tp); !ok || o != i {
					t.Fatalf("OwnerOf(%v) = %d, %v but listed under subtask %d", tp, o, ok, i)
				}
				if want, _ := KafkaSplitOwner(tp, p); want != i {
					t.Fatalf("FreshAssignment put %v on %d, KafkaSplitOwner says %d", tp, i, want)
				}
			}
		}
		for _, tp := range Partitions(topics) {
			if seen[tp] != 1 {
				t.Fatalf("partition %v has %d owners, want 1", tp, seen[tp])
			}
		}
		for _, tc := range topics {
			perSubtask := make([]int, p)
			for q := range tc.Partitions {
				o, _ := a.OwnerOf(TopicPartition{tc.Name, int32(q)})
				perSubtask[o]++
			}
			lo, hi := perSubtask[0], perSubtask[0]
			for _, c := range perSubtask {
				lo, hi = min(lo, c), max(hi, c)
			}
			if hi-lo > 1 {
				t.Fatalf("topic %s (%d partitions) at p=%d: counts range %d..%d, want at most 1 apart", tc.Name, tc.Partitions, p, lo, hi)
			}
		}
	}
}

func randomTopics(r *rand.Rand, n, maxPartitions int) []Topic {
	topics := make([]Topic, n)
	for i := range topics {
		var b strings.Builder
		for range 1 + r.IntN(20) {
			b.WriteByte("abcdefghijklmnopqrstuvwxyz._-0123456789"[r.IntN(39)])
		}
		topics[i] = Topic{Name: b.String() + "-" + string(rune('a'+i)), Partitions: 1 + r.IntN(maxPartitions)}
	}
	return topics
}

func TestWorkedExamples(t *testing.T) {
	// String.hashCode("orders") = -1008770331; with n = 4 the start index
	// ((h·31) & 0x7FFFFFFF) mod 4 is 3 and partitions 0..7 go to
	// 3,0,1,2,3,0,1,2 (KafkaSourceEnumerator.getSplitOwner).
	if h := StringHashCode("orders"); h != -1008770331 {
		t.Errorf(`StringHashCode("orders") = %d, want -1008770331`, h)
	}
	for q, want := range []int{3, 0, 1, 2, 3, 0, 1, 2} {
		if got, _ := KafkaSplitOwner(TopicPartition{"orders", int32(q)}, 4); got != want {
			t.Errorf("KafkaSplitOwner(orders-%d, 4) = %d, want %d", q, got, want)
		}
	}
	// KeyGroupRangeAssignment.computeKeyGroupRangeForOperatorIndex:
	// M=128, p=3 → [0,42] [43,85] [86,127].
	rs, _ := KeyGroupRanges(128, 3)
	want := []KeyGroupRange{{0, 42}, {43, 85}, {86, 127}}
	for i := range want {
		if rs[i] != want[i] {
			t.Errorf("KeyGroupRanges(128, 3)[%d] = %v, want %v", i, rs[i], want[i])
		}
	}
	// The MIN_VALUE branch of the murmur fold: -MinInt32 is MinInt32, so a
	// naive abs would stay negative.
	if got := foldNonNegative(-1 << 31); got != 0 {
		t.Errorf("foldNonNegative(MinInt32) = %d, want 0", got)
	}
	// Emoji count as two UTF-16 code units: "😀" is U+1F600 = D83D DE00.
	if got, want := StringHashCode("😀"), int32(0xD83D*31+0xDE00); got != want {
		t.Errorf(`StringHashCode("😀") = %d, want %d`, got, want)
	}
	// Long: -1 → 0, MIN_VALUE → MIN_VALUE.
	if got := LongHashCode(-1); got != 0 {
		t.Errorf("LongHashCode(-1) = %d, want 0", got)
	}
	if got := LongHashCode(-1 << 63); got != -1<<31 {
		t.Errorf("LongHashCode(MinInt64) = %d, want %d", got, int32(-1<<31))
	}
}

func TestParseKeyType(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"string", "string"}, {"String", "string"}, {"Integer", "int"}, {"LONG", "long"},
		{"tuple<string,int>", "tuple<string,int>"}, {"Tuple2<String, Integer>", "tuple<string,int>"},
		{"tuple<long>", "tuple<long>"},
	} {
		kt, err := ParseKeyType(tc.in)
		if err != nil || kt.String() != tc.want {
			t.Errorf("ParseKeyType(%q) = %v, %v, want %s", tc.in, kt, err, tc.want)
		}
	}
	for _, bad := range []string{"", "uuid", "tuple<>", "tuple<string,uuid>", "Tuple3<String,Integer>", "tuple<" + strings.Repeat("int,", 25) + "int>", "tuple<string"} {
		if kt, err := ParseKeyType(bad); err == nil {
			t.Errorf("ParseKeyType(%q) = %v, want an error", bad, kt)
		}
	}
}

// javaStringHash is an independent reference: the textbook loop over
// utf16.Encode, used to check StringHashCode's faster path.
func javaStringHash(s string) int32 {
	var h int32
	for _, u := range utf16.Encode([]rune(s)) {
		h = 31*h + int32(u)
	}
	return h
}

// FuzzStringHashCode: StringHashCode (8 bytes at a time where it can) equals
// the byte-by-byte loop it replaced; on valid UTF-8 it is the textbook hash of
// utf16.Encode; on any bytes, it hashes what appendJavaUTF16 decodes, and
// that equals jdkDecodeLiteral, the line-by-line JDK 17 transliteration
// (which TestStringHashCodeMatchesJDKOnInvalidUTF8 checks against a JVM).
func FuzzStringHashCode(f *testing.F) {
	for _, s := range []string{
		"", "orders", "😀", "𝄞x", "Aa", "BB", "héllo", "\xff\xfe", "\uFFFD",
		"\xe2\x82", "\xe2\x82A", "\xf0\x9f\x98", "\xed\xa0\x80", "\xed\xa0A", "\xe0\x80\x80",
		"\xf4\x90\x80\x80", "\xf0\x9fA\x80", "ok\xe2\x82\xac\xe2\x82",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got := StringHashCode(s)
		if want := stringHashCodeBytewise(s); got != want {
			t.Fatalf("StringHashCode(%q) = %d, the byte-by-byte loop %d", s, got, want)
		}
		units := appendJavaUTF16(nil, s)
		if utf8.ValidString(s) {
			if want := javaStringHash(s); got != want {
				t.Fatalf("StringHashCode(%q) = %d, want %d", s, got, want)
			}
			if want := utf16.Encode([]rune(s)); !slices.Equal(units, want) {
				t.Fatalf("appendJavaUTF16(%q) = %04x, want %04x", s, units, want)
			}
		}
		if want := jdkDecodeLiteral(s); !slices.Equal(units, want) {
			t.Fatalf("appendJavaUTF16(% x) = %04x, JDK transliteration %04x", s, units, want)
		}
		if want := hashUnits(units); got != want {
			t.Fatalf("StringHashCode(% x) = %d, want %d (hash of %04x)", s, got, want, units)
		}
		for _, maxP := range []int{1, 7, 128, 32768} {
			kg := KeyGroupForHash(got, maxP)
			if kg < 0 || kg >= maxP {
				t.Fatalf("KeyGroupForHash(%q, %d) = %d, want 0..%d", s, maxP, kg, maxP-1)
			}
		}
	})
}

// FuzzHashKey: no key text or type spelling panics; every accepted key has
// a key group inside 0..maxP-1.
func FuzzHashKey(f *testing.F) {
	for _, seed := range [][2]string{
		{"string", "x"}, {"int", "-2147483648"}, {"long", "9223372036854775807"}, {"tuple<string,int>", `["a",1]`},
		{"tuple<string,long,boolean>", `[null, "5", true]`}, {"double", "NaN"}, {"char", "é"}, {"tuple<int>", `[1e400]`},
	} {
		f.Add(seed[0], seed[1])
	}
	f.Fuzz(func(t *testing.T, typ, text string) {
		kt, err := ParseKeyType(typ)
		if err != nil {
			return
		}
		h, err := HashKey(kt, text)
		if err != nil {
			return
		}
		if kg := KeyGroupForHash(h, 128); kg < 0 || kg >= 128 {
			t.Fatalf("HashKey(%s, %q) gave key group %d", typ, text, kg)
		}
	})
}

// FuzzKafkaSplitOwner: the owner is always a valid subtask, and equals the
// formula computed with 64-bit arithmetic when no int overflow can occur.
func FuzzKafkaSplitOwner(f *testing.F) {
	f.Add("orders", int32(0), 4)
	f.Add("", int32(2147483647), 32768)
	f.Fuzz(func(t *testing.T, topic string, partition int32, n int) {
		if partition < 0 {
			return
		}
		got, err := KafkaSplitOwner(TopicPartition{topic, partition}, n)
		if n <= 0 {
			if err == nil {
				t.Fatalf("KafkaSplitOwner(%q, %d, %d) = %d, want / by zero", topic, partition, n, got)
			}
			return
		}
		if err != nil || got < 0 || got >= n {
			// Java int wraps when startIndex + partition overflows; the
			// result may then be negative, exactly as in Flink.
			if int64(partition)+int64(n) <= 1<<31-1 {
				t.Fatalf("KafkaSplitOwner(%q, %d, %d) = %d, %v", topic, partition, n, got, err)
			}
		}
	})
}

// benchStringKeys returns the 1,000,000 keys of the String routing
// benchmarks (and of cmd/keybench, which times the JVM on them):
// "customer-", 0 to 6 x's, a letter and the index, 11 to 23 ASCII bytes.
func benchStringKeys() []string {
	keys := make([]string, 1_000_000)
	for i := range keys {
		keys[i] = "customer-" + strings.Repeat("x", i%7) + string(rune('a'+i%26)) + itoa(i)
	}
	return keys
}

// BenchmarkKeyGroups1MStringKeys is issue 26's single-thread figure: each
// key's StringHashCode and KeyGroupForHash at max parallelism 32768, one
// key after another on one goroutine.
func BenchmarkKeyGroups1MStringKeys(b *testing.B) {
	keys := benchStringKeys()
	b.ResetTimer()
	for b.Loop() {
		var sink int
		for _, k := range keys {
			sink += KeyGroupForHash(StringHashCode(k), 32768)
		}
		_ = sink
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/1e6, "ms/1M-keys")
}

func itoa(i int) string {
	var buf [20]byte
	n := len(buf)
	for {
		n--
		buf[n] = byte('0' + i%10)
		i /= 10
		if i == 0 {
			return string(buf[n:])
		}
	}
}
