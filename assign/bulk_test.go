package assign

import (
	"errors"
	"math"
	"math/rand/v2"
	"runtime"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"
)

// stringHashCodeBytewise is StringHashCode as it was before the 8-byte
// path: one multiply-add per ASCII byte, then hashUTF8 from the first byte
// of 0x80 or more. The property tests hold the fast path to it.
func stringHashCodeBytewise(s string) int32 {
	var h int32
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= utf8.RuneSelf {
			return hashUTF8(h, s[i:])
		}
		h = 31*h + int32(c)
	}
	return h
}

// foldNonNegativeBranching is MathUtils.murmurHash's tail as Flink writes it.
func foldNonNegativeBranching(h int32) int32 {
	switch {
	case h >= 0:
		return h
	case h != math.MinInt32:
		return -h
	default:
		return 0
	}
}

// randomJavaText draws a string of up to maxLen bytes from pieces that
// exercise every path of StringHashCode: ASCII runs (so that 8-byte blocks
// and tails of every length occur), 2-, 3- and 4-byte UTF-8 (a 4-byte rune
// hashes as a surrogate pair), a real U+FFFD, a lone surrogate written as
// UTF-8 (ED A0 80 .. ED BF BF, which the JDK decodes to one U+FFFD),
// truncated sequences and stray bytes.
func randomJavaText(r *rand.Rand, maxLen int) string {
	var b strings.Builder
	n := r.IntN(maxLen + 1)
	for b.Len() < n {
		switch k := r.IntN(20); {
		case k < 12:
			for range 1 + r.IntN(12) {
				b.WriteByte(byte(r.IntN(0x80)))
			}
		case k == 12:
			b.WriteRune(rune(0x80 + r.IntN(0x780)))
		case k == 13:
			b.WriteRune(rune(0x800 + r.IntN(0xD000))) // BMP below the surrogates
		case k == 14:
			b.WriteRune(rune(0x10000 + r.IntN(0x100000))) // a surrogate pair in Java
		case k == 15:
			b.WriteString("\uFFFD")
		case k == 16:
			u := 0xD800 + r.IntN(0x800) // a lone surrogate, UTF-8-encoded
			b.Write([]byte{0xE0 | byte(u>>12), 0x80 | byte(u>>6)&0x3F, 0x80 | byte(u)&0x3F})
		case k == 17:
			full := string(rune(0x800 + r.IntN(0x100000)))
			b.WriteString(full[:1+r.IntN(len(full)-1)]) // cut short
		default:
			b.WriteByte(byte(0x80 + r.IntN(0x80)))
		}
	}
	return b.String()
}

func TestStringHashCodeMatchesSlowPaths(t *testing.T) {
	r := rand.New(rand.NewPCG(26, 1))
	check := func(s string) {
		t.Helper()
		got := StringHashCode(s)
		if want := stringHashCodeBytewise(s); got != want {
			t.Fatalf("StringHashCode(%q) = %d, the byte-by-byte loop %d", s, got, want)
		}
		if want := hashUnits(appendJavaUTF16(nil, s)); got != want {
			t.Fatalf("StringHashCode(%q) = %d, the hash of its Java UTF-16 units %d", s, got, want)
		}
	}
	check("")
	for range 200_000 {
		check(randomJavaText(r, 40))
	}
	for range 2_000 {
		check(randomJavaText(r, 5000))
	}
	// One non-ASCII byte at every position of ASCII strings of every length
	// up to 40, so each block and tail meets it.
	for n := 1; n <= 40; n++ {
		ascii := make([]byte, n)
		for i := range ascii {
			ascii[i] = byte(r.IntN(0x80))
		}
		check(string(ascii))
		for i := range n {
			for _, bad := range []string{"\x80", "\xff", "é", "€", "😀", "\xed\xa0\x80", "\xed\xbf\xbf"} {
				check(string(ascii[:i]) + bad + string(ascii[i:]))
			}
		}
	}
	// Every string of up to 3 bytes over an alphabet of the edge bytes.
	alpha := []byte{0x00, 0x01, 0x1F, 'A', 'z', 0x7F, 0x80, 0xBF, 0xC2, 0xE2, 0xED, 0xF0, 0xFF}
	for _, a := range alpha {
		check(string([]byte{a}))
		for _, b := range alpha {
			check(string([]byte{a, b}))
			for _, c := range alpha {
				check(string([]byte{a, b, c}))
			}
		}
	}
	// The largest ASCII bytes in every lane: no lane of hashASCII8 carries.
	for n := 0; n <= 64; n++ {
		check(strings.Repeat("\x7f", n))
	}
}

func TestPow31(t *testing.T) {
	p := uint32(1)
	for k := range 9 {
		switch {
		case pow31[k] != p:
			t.Errorf("pow31[%d] = %d, want %d", k, pow31[k], p)
		case k == 4 && pow31x4 != p, k == 8 && pow31x8 != p:
			t.Errorf("31^%d = %d, the constant says otherwise", k, p)
		}
		p *= 31
	}
}

func TestFoldNonNegativeMatchesFlink(t *testing.T) {
	r := rand.New(rand.NewPCG(26, 2))
	edge := []int32{0, 1, -1, 2, -2, math.MaxInt32, math.MinInt32, math.MinInt32 + 1, math.MaxInt32 - 1}
	for i := range 1_000_000 {
		h := int32(r.Uint32())
		if i < len(edge) {
			h = edge[i]
		}
		if got, want := foldNonNegative(h), foldNonNegativeBranching(h); got != want {
			t.Fatalf("foldNonNegative(%d) = %d, Flink's branches %d", h, got, want)
		}
	}
}

func TestKeyGroupForHashMatchesRemainder(t *testing.T) {
	r := rand.New(rand.NewPCG(26, 3))
	for range 1_000_000 {
		h := int32(r.Uint32())
		maxP := 1 + r.IntN(UpperBoundMaxParallelism)
		if r.IntN(2) == 0 {
			maxP = 1 << r.IntN(16)
		}
		if got, want := KeyGroupForHash(h, maxP), int(MurmurHash(h)%int32(maxP)); got != want {
			t.Fatalf("KeyGroupForHash(%d, %d) = %d, murmurHash %% maxP = %d", h, maxP, got, want)
		}
	}
}

// routeParams are max parallelisms and parallelisms the bulk tests use:
// powers of two (the mask path) and not, with and without subtasks.
var routeParams = []struct{ maxP, p int }{
	{128, 0}, {128, 3}, {32768, 0}, {32768, 32768}, {32768, 100}, {1, 1}, {7, 7}, {100, 3}, {720, 0}, {3, 1},
}

func TestRouteStringsMatchesPerKey(t *testing.T) {
	r := rand.New(rand.NewPCG(26, 4))
	for _, n := range []int{0, 1, 100, routeInline, routeInline + 1, 100_003} {
		keys := make([]string, n)
		for i := range keys {
			keys[i] = randomJavaText(r, 30)
		}
		for _, tc := range routeParams {
			out := Routes{Hashes: make([]int32, n), KeyGroups: make([]int32, n)}
			if tc.p > 0 {
				out.Subtasks = make([]int32, n)
			}
			if err := RouteStrings(keys, tc.maxP, tc.p, out); err != nil {
				t.Fatalf("RouteStrings(%d keys, %d, %d): %v", n, tc.maxP, tc.p, err)
			}
			// The shapes without hashes take loops of their own.
			kgOnly := Routes{KeyGroups: make([]int32, n)}
			if err := RouteStrings(keys, tc.maxP, 0, kgOnly); err != nil {
				t.Fatal(err)
			}
			var kgSub Routes
			if tc.p > 0 {
				kgSub = Routes{KeyGroups: make([]int32, n), Subtasks: make([]int32, n)}
				if err := RouteStrings(keys, tc.maxP, tc.p, kgSub); err != nil {
					t.Fatal(err)
				}
				if !slices.Equal(kgSub.KeyGroups, out.KeyGroups) || !slices.Equal(kgSub.Subtasks, out.Subtasks) {
					t.Fatalf("%d keys at maxP %d, p %d: key groups and subtasks differ with and without hashes", n, tc.maxP, tc.p)
				}
			}
			for i, k := range keys {
				h := StringHashCode(k)
				kg := KeyGroupForHash(h, tc.maxP)
				if out.Hashes[i] != h || int(out.KeyGroups[i]) != kg || int(kgOnly.KeyGroups[i]) != kg {
					t.Fatalf("key %d %q at maxP %d: hash %d, key groups %d and %d, want %d, %d",
						i, k, tc.maxP, out.Hashes[i], out.KeyGroups[i], kgOnly.KeyGroups[i], h, kg)
				}
				if tc.p > 0 {
					if want := OperatorIndex(tc.maxP, tc.p, kg); int(out.Subtasks[i]) != want {
						t.Fatalf("key %d %q at maxP %d, p %d: subtask %d, want %d", i, k, tc.maxP, tc.p, out.Subtasks[i], want)
					}
				}
			}
		}
	}
}

func TestRouteStringsGolden(t *testing.T) {
	eachGoldenSet(t, func(t *testing.T, dir string) {
		rows := readGolden(t, dir, "key_group_string.csv", "key", "java_hash", "max_parallelism", "key_group")
		byMaxP := map[int][]int{} // row indexes per max parallelism
		for i, r := range rows {
			byMaxP[atoi(t, r[2])] = append(byMaxP[atoi(t, r[2])], i)
		}
		for maxP, idx := range byMaxP {
			keys := make([]string, len(idx))
			for j, i := range idx {
				keys[j] = rows[i][0]
			}
			out := Routes{Hashes: make([]int32, len(keys)), KeyGroups: make([]int32, len(keys))}
			if err := RouteStrings(keys, maxP, 0, out); err != nil {
				t.Fatal(err)
			}
			for j, i := range idx {
				if int(out.Hashes[j]) != atoi(t, rows[i][1]) || int(out.KeyGroups[j]) != atoi(t, rows[i][3]) {
					t.Errorf("RouteStrings(%q, %d) = %d, %d, want %s, %s", keys[j], maxP, out.Hashes[j], out.KeyGroups[j], rows[i][1], rows[i][3])
				}
			}
		}
	})
}

func TestRouteKeysMatchesHashKey(t *testing.T) {
	r := rand.New(rand.NewPCG(26, 5))
	n := 3*routeInline + 17
	ints, tuples := make([]string, n), make([]string, n)
	for i := range n {
		v := int32(r.Uint32())
		ints[i] = itoa(int(v & 0x7fffffff)) // non-negative; itoa takes no sign
		if v < 0 {
			ints[i] = "-" + ints[i]
		}
		tuples[i] = `["` + []string{"", "a", "é", "😀", "\\ud800", "customer-"}[r.IntN(6)] + itoa(i) + `", ` + ints[i] + `]`
	}
	for _, tc := range []struct {
		typ  string
		keys []string
	}{{"int", ints}, {"long", ints}, {"tuple<string,int>", tuples}, {"string", tuples}} {
		kt, err := ParseKeyType(tc.typ)
		if err != nil {
			t.Fatal(err)
		}
		out := Routes{Hashes: make([]int32, n), KeyGroups: make([]int32, n), Subtasks: make([]int32, n)}
		if err := RouteKeys(kt, tc.keys, 720, 7, out); err != nil {
			t.Fatalf("RouteKeys(%s): %v", tc.typ, err)
		}
		for i, k := range tc.keys {
			h, err := HashKey(kt, k)
			if err != nil {
				t.Fatalf("HashKey(%s, %q): %v, RouteKeys routed it", tc.typ, k, err)
			}
			kg := KeyGroupForHash(h, 720)
			if out.Hashes[i] != h || int(out.KeyGroups[i]) != kg || int(out.Subtasks[i]) != OperatorIndex(720, 7, kg) {
				t.Fatalf("RouteKeys(%s)[%d] %q = %d, %d, %d, want %d, %d, %d", tc.typ, i, k,
					out.Hashes[i], out.KeyGroups[i], out.Subtasks[i], h, kg, OperatorIndex(720, 7, kg))
			}
		}
	}
}

// TestRouteKeysFirstError: among several bad keys spread over chunks that
// run on different goroutines, the error names the first by index, with
// HashKey's own message.
func TestRouteKeysFirstError(t *testing.T) {
	n := 10 * routeChunk
	keys := make([]string, n)
	for i := range keys {
		keys[i] = itoa(i)
	}
	for _, bad := range [][]int{{n - 1}, {5 * routeChunk, 9 * routeChunk}, {9*routeChunk + 3, routeChunk + 1, 2}, {0}} {
		ks := append([]string(nil), keys...)
		for _, i := range bad {
			ks[i] = "x" + itoa(i)
		}
		first := bad[0]
		for _, i := range bad {
			first = min(first, i)
		}
		kt := KeyType{Kind: KindInt}
		err := RouteKeys(kt, ks, 128, 0, Routes{KeyGroups: make([]int32, n)})
		var ke *KeyError
		if !errors.As(err, &ke) || ke.Index != first {
			t.Fatalf("bad keys at %v: RouteKeys = %v, want a KeyError at %d", bad, err, first)
		}
		_, want := HashKey(kt, ks[first])
		if ke.Err.Error() != want.Error() {
			t.Errorf("KeyError.Err = %q, HashKey says %q", ke.Err, want)
		}
	}
}

func TestRouteRefusesBadArguments(t *testing.T) {
	keys := []string{"a", "b"}
	for _, tc := range []struct {
		name    string
		maxP, p int
		out     Routes
		want    string
		length  bool
	}{
		{"max parallelism 0", 0, 0, Routes{KeyGroups: make([]int32, 2)}, "Operator parallelism not within bounds: 0", false},
		{"max parallelism too large", 32769, 0, Routes{}, "Operator parallelism not within bounds: 32769", false},
		{"parallelism above max", 4, 8, Routes{}, "Maximum parallelism must not be smaller than parallelism.", false},
		{"short key groups", 128, 0, Routes{KeyGroups: make([]int32, 1)}, "KeyGroups has 1 elements for 2 keys", true},
		{"long hashes", 128, 0, Routes{Hashes: make([]int32, 3)}, "Hashes has 3 elements for 2 keys", true},
		{"subtasks without parallelism", 128, 0, Routes{Subtasks: make([]int32, 2)}, "Subtasks given without a parallelism", true},
	} {
		for _, route := range []func() error{
			func() error { return RouteStrings(keys, tc.maxP, tc.p, tc.out) },
			func() error { return RouteKeys(KeyType{Kind: KindLong}, []string{"1", "2"}, tc.maxP, tc.p, tc.out) },
		} {
			err := route()
			if err == nil || !strings.Contains(err.Error(), tc.want) || errors.Is(err, ErrRoutesLength) != tc.length {
				t.Errorf("%s: %v, want %q (length error: %v)", tc.name, err, tc.want, tc.length)
			}
		}
	}
}

// TestRouteStringsAllocatesNothingPerKey: 40,000 keys and 400,000 both take
// a few allocations per call (the goroutines and their bookkeeping), well
// under one per key.
func TestRouteStringsAllocatesNothingPerKey(t *testing.T) {
	keys := make([]string, 400_000)
	for i := range keys {
		keys[i] = "customer-" + itoa(i)
	}
	allocs := func(n int) float64 {
		out := Routes{KeyGroups: make([]int32, n), Subtasks: make([]int32, n)}
		return testing.AllocsPerRun(5, func() {
			if err := RouteStrings(keys[:n], 128, 4, out); err != nil {
				t.Fatal(err)
			}
		})
	}
	small, large := allocs(40_000), allocs(400_000)
	if limit := float64(4 + 3*runtime.GOMAXPROCS(0)); small > limit || large > limit {
		t.Errorf("RouteStrings allocates %.0f times for 40,000 keys, %.0f for 400,000: want a few per call, none per key", small, large)
	}
	if a := testing.AllocsPerRun(100, func() { _ = StringHashCode(keys[12345]) }); a != 0 {
		t.Errorf("StringHashCode allocates %.0f times", a)
	}
}

// FuzzRouteStrings: the keys of a fuzzed text (its lines) route as each
// does alone, at a fuzzed max parallelism and parallelism.
func FuzzRouteStrings(f *testing.F) {
	f.Add("orders\npayments\n😀\n\xed\xa0\x80x\n", 128, 3)
	f.Add("", 32768, 0)
	f.Add("customer-00000001\nA\n\xff\xfe\xfd\xfc\xfb\xfa\xf9\xf8\xf7", 100, 100)
	f.Fuzz(func(t *testing.T, text string, maxP, p int) {
		keys := strings.Split(text, "\n")
		n := len(keys)
		out := Routes{Hashes: make([]int32, n), KeyGroups: make([]int32, n)}
		if p != 0 {
			out.Subtasks = make([]int32, n)
		}
		err := RouteStrings(keys, maxP, p, out)
		var want error
		if p == 0 {
			want = CheckParallelism(maxP)
		} else {
			want = CheckMaxParallelism(maxP, p)
		}
		if (err == nil) != (want == nil) {
			t.Fatalf("RouteStrings(maxP %d, p %d) = %v, the checks say %v", maxP, p, err, want)
		}
		if err != nil {
			return
		}
		for i, k := range keys {
			h := stringHashCodeBytewise(k)
			kg := int(MurmurHash(h) % int32(maxP))
			if out.Hashes[i] != h || int(out.KeyGroups[i]) != kg {
				t.Fatalf("key %q: %d, %d, want %d, %d", k, out.Hashes[i], out.KeyGroups[i], h, kg)
			}
			if p != 0 && int(out.Subtasks[i]) != kg*p/maxP {
				t.Fatalf("key %q: subtask %d, want %d", k, out.Subtasks[i], kg*p/maxP)
			}
		}
	})
}

// BenchmarkKeyGroups1MStringKeysBytewise is BenchmarkKeyGroups1MStringKeys
// on the code StringHashCode and KeyGroupForHash replaced (one
// multiply-add per byte, Flink's branches in the murmur fold, a division):
// the before of the same run.
func BenchmarkKeyGroups1MStringKeysBytewise(b *testing.B) {
	keys := benchStringKeys()
	b.ResetTimer()
	for b.Loop() {
		var sink int
		for _, k := range keys {
			m := int32(bitMix(murmurBlock(stringHashCodeBytewise(k))))
			sink += int(foldNonNegativeBranching(m) % 32768)
		}
		_ = sink
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/1e6, "ms/1M-keys")
}

// murmurBlock is MurmurHash before bitMix and the fold.
func murmurBlock(code int32) uint32 {
	k := uint32(code) * 0xcc9e2d51
	k = k<<15 | k>>17
	k *= 0x1b873593
	h := k<<13 | k>>19
	return (h*5 + 0xe6546b64) ^ 4
}

// BenchmarkRouteStrings1MStringKeys is issue 26's bulk figure: the keys of
// BenchmarkKeyGroups1MStringKeys through RouteStrings on every core, key
// groups at max parallelism 32768; /subtasks adds each key's subtask at
// parallelism 100.
func BenchmarkRouteStrings1MStringKeys(b *testing.B) {
	keys := benchStringKeys()
	kgs, subs := make([]int32, len(keys)), make([]int32, len(keys))
	for _, tc := range []struct {
		name string
		p    int
		out  Routes
	}{{"keygroups", 0, Routes{KeyGroups: kgs}}, {"subtasks", 100, Routes{KeyGroups: kgs, Subtasks: subs}}} {
		b.Run(tc.name, func(b *testing.B) {
			for b.Loop() {
				if err := RouteStrings(keys, 32768, tc.p, tc.out); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/1e6, "ms/1M-keys")
		})
	}
}
