package keysample

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
	"unsafe"

	"github.com/skewscope/skewscope/assign"
)

func stringKey(text string) Key { return Key{Text: text, Hash: assign.StringHashCode(text)} }

// zipfStream returns n keys drawn from a Zipf law with exponent s over
// distinct keys, and the true count of each key.
func zipfStream(seed uint64, s float64, distinct, n int) ([]Key, map[Key]int64) {
	r := rand.New(rand.NewPCG(seed, 1))
	z := rand.NewZipf(r, s, 1, uint64(distinct-1))
	keys := make([]Key, distinct)
	for i := range keys {
		keys[i] = stringKey("customer-" + strconv.Itoa(i))
	}
	stream := make([]Key, n)
	truth := map[Key]int64{}
	for i := range stream {
		k := keys[z.Uint64()]
		stream[i] = k
		truth[k]++
	}
	return stream, truth
}

// checkSpaceSaving checks Space-Saving's guarantees against the true counts.
func checkSpaceSaving(t *testing.T, name string, s *Summary, truth map[Key]int64) {
	t.Helper()
	n := s.Records()
	top := s.Top(s.Capacity() + 1)
	if len(top) > s.Capacity() || s.Counters() > s.Capacity() || s.indexed() != s.Counters() {
		t.Fatalf("%s: %d keys, %d counters, %d indexed, capacity %d", name, len(top), s.Counters(), s.indexed(), s.Capacity())
	}
	var sum int64
	in := map[Key]bool{}
	for i, h := range top {
		k := Key{h.Text, h.Hash}
		in[k] = true
		sum += h.Count
		if f := truth[k]; f > h.Count || h.Count > f+h.ErrorBound {
			t.Errorf("%s: key %q true count %d, Count %d, ErrorBound %d: want true <= Count <= true+ErrorBound", name, h.Text, f, h.Count, h.ErrorBound)
		}
		if h.KeyGroup != assign.KeyGroupForHash(h.Hash, s.MaxParallelism()) {
			t.Errorf("%s: key %q in key group %d, want %d", name, h.Text, h.KeyGroup, assign.KeyGroupForHash(h.Hash, s.MaxParallelism()))
		}
		if i > 0 && top[i-1].Count < h.Count {
			t.Errorf("%s: Top not sorted: %d before %d", name, top[i-1].Count, h.Count)
		}
	}
	if sum != n {
		t.Errorf("%s: counts sum to %d, want Records %d", name, sum, n)
	}
	for k, f := range truth {
		if f > n/int64(s.Capacity()) && !in[k] {
			t.Errorf("%s: key %q with true count %d > N/capacity = %d is not in the summary", name, k.Text, f, n/int64(s.Capacity()))
		}
	}
}

// TestSpaceSavingZipf: on Zipf streams of several skews, every counter's
// Count is within its ErrorBound above the true count, and every key more
// frequent than N/capacity is kept.
func TestSpaceSavingZipf(t *testing.T) {
	for _, tc := range []struct {
		s                     float64
		distinct, n, capacity int
	}{
		{1.01, 50_000, 300_000, 500},
		{1.2, 20_000, 200_000, 100},
		{2, 10_000, 100_000, 10},
		{1.5, 1_000, 50_000, 2_000}, // more counters than keys: exact
	} {
		name := fmt.Sprintf("zipf s=%g %d keys %d records capacity %d", tc.s, tc.distinct, tc.n, tc.capacity)
		stream, truth := zipfStream(uint64(tc.distinct), tc.s, tc.distinct, tc.n)
		s := NewSummary(tc.capacity, 128)
		for _, k := range stream {
			s.Add(k)
		}
		checkSpaceSaving(t, name, s, truth)
		if tc.capacity >= len(truth) {
			for _, h := range s.Top(tc.capacity) {
				if h.ErrorBound != 0 || h.Count != truth[Key{h.Text, h.Hash}] {
					t.Errorf("%s: key %q Count %d ± %d, want exactly %d", name, h.Text, h.Count, h.ErrorBound, truth[Key{h.Text, h.Hash}])
				}
			}
			if d, se := s.Distinct(); d != float64(len(truth)) || se != 0 {
				t.Errorf("%s: Distinct() = %g ± %g, want exactly %d", name, d, se, len(truth))
			}
		}
	}
}

// TestSummaryMemoryBounded: 1,000,000 records over 200,000 distinct keys
// with 1,000 counters keep 1,000 counters, 1,000 map entries and at most
// 1,000 buckets.
func TestSummaryMemoryBounded(t *testing.T) {
	if testing.Short() {
		t.Skip("1M records")
	}
	const n, distinct, capacity = 1_000_000, 200_000, 1000
	stream, truth := zipfStream(3, 1.05, distinct, n)
	if len(truth) < distinct/2 {
		t.Fatalf("stream has only %d distinct keys", len(truth))
	}
	s := NewSummary(capacity, 4096)
	for i, k := range stream {
		s.Add(k)
		if i%100_000 == 0 && (s.Counters() > capacity || s.indexed() > capacity) {
			t.Fatalf("after %d records: %d counters, %d indexed", i, s.Counters(), s.indexed())
		}
	}
	used := 0
	for b := s.minBucket; b >= 0; b = s.buckets[b].next {
		used++
	}
	if s.Counters() != capacity || s.indexed() != capacity || cap(s.counters) != capacity || len(s.buckets) != capacity || used+len(s.freeBuckets) != capacity {
		t.Errorf("%d counters (cap %d), %d indexed, %d buckets in use + %d free of %d, want %d counters", s.Counters(), cap(s.counters), s.indexed(), used, len(s.freeBuckets), len(s.buckets), capacity)
	}
	checkSpaceSaving(t, "1M zipf", s, truth)
	t.Logf("%d records, %d distinct keys: %d counters, %d buckets", n, len(truth), s.Counters(), used)
}

// TestAddDoesNotAllocate: counting a key already in the summary, or one
// that evicts another, allocates nothing.
func TestAddDoesNotAllocate(t *testing.T) {
	s := NewSummary(100, 128)
	keys := make([]Key, 1000)
	for i := range keys {
		keys[i] = stringKey("k" + strconv.Itoa(i))
	}
	for _, k := range keys {
		s.Add(k)
	}
	i := 0
	if a := testing.AllocsPerRun(10_000, func() { s.Add(keys[i%len(keys)]); i++ }); a != 0 {
		t.Errorf("Add allocates %g times per record, want 0", a)
	}
}

// TestDistinctWithinThreeStdErr: on streams of 10k and 100k distinct keys
// (each seen 1 to 5 times) the HyperLogLog estimate is within 3 standard
// errors.
func TestDistinctWithinThreeStdErr(t *testing.T) {
	for _, distinct := range []int{10_000, 100_000} {
		for seed := range uint64(3) {
			r := rand.New(rand.NewPCG(seed, uint64(distinct)))
			s := NewSummary(1000, 128)
			for i := range distinct {
				k := stringKey(fmt.Sprintf("user-%d-%x@example.com", i, r.Uint32()))
				for range 1 + r.IntN(5) {
					s.Add(k)
				}
			}
			est, se := s.Distinct()
			if se <= 0 || math.Abs(est-float64(distinct)) > 3*se {
				t.Errorf("%d distinct keys (seed %d): Distinct() = %.0f ± %.0f, want within 3 standard errors", distinct, seed, est, se)
			}
			t.Logf("%d distinct keys (seed %d): %.0f ± %.0f", distinct, seed, est, se)
		}
	}
}

// TestKeyGroupCountsAndLayout: the key-group counts sum to Records and equal
// a brute-force count, and AtParallelism's loads equal the key groups summed
// by OperatorIndex and by KeyGroupRangeFor.
func TestKeyGroupCountsAndLayout(t *testing.T) {
	for _, maxP := range []int{128, 100, 1} {
		t.Run(strconv.Itoa(maxP), func(t *testing.T) { testKeyGroupCountsAndLayout(t, maxP) })
	}
}

func testKeyGroupCountsAndLayout(t *testing.T, maxP int) {
	stream, truth := zipfStream(9, 1.3, 5_000, 100_000)
	s := NewSummary(50, maxP)
	want := make([]int64, maxP)
	for _, k := range stream {
		s.Add(k)
		want[assign.KeyGroupForHash(k.Hash, maxP)]++
	}
	got := s.KeyGroupCounts()
	var sum int64
	for _, n := range got {
		sum += n
	}
	if sum != s.Records() || !slices.Equal(got, want) {
		t.Fatalf("KeyGroupCounts sums to %d (Records %d), differs from the brute-force count: %v", sum, s.Records(), !slices.Equal(got, want))
	}
	for p := 1; p <= maxP; p++ {
		l, err := s.AtParallelism(p)
		if err != nil {
			t.Fatalf("AtParallelism(%d) = %v", p, err)
		}
		per := make([]int64, p)
		for k, f := range truth {
			per[assign.OperatorIndex(maxP, p, assign.KeyGroupForHash(k.Hash, maxP))] += f
		}
		if !slices.Equal(l.PerSubtask, per) {
			t.Fatalf("AtParallelism(%d).PerSubtask = %v, want %v", p, l.PerSubtask, per)
		}
		for i := range p {
			r, _ := assign.KeyGroupRangeFor(maxP, p, i)
			var n int64
			for kg := r.Start; kg <= r.End; kg++ {
				n += got[kg]
			}
			if n != l.PerSubtask[i] {
				t.Fatalf("p=%d subtask %d: %d records, key groups %d-%d hold %d", p, i, l.PerSubtask[i], r.Start, r.End, n)
			}
		}
		if m := slices.Max(per); l.PerSubtask[l.Busiest] != m || l.Share != float64(m)/float64(s.Records()) {
			t.Errorf("AtParallelism(%d): busiest %d with share %g, want %d records", p, l.Busiest, l.Share, m)
		}
		if len(l.TopKeys) != LayoutTopKeys {
			t.Fatalf("AtParallelism(%d) placed %d keys, want %d", p, len(l.TopKeys), LayoutTopKeys)
		}
		for _, kp := range l.TopKeys {
			if kp.Subtask != assign.OperatorIndex(maxP, p, kp.Key.KeyGroup) || kp.SubtaskShare > 1 {
				t.Errorf("AtParallelism(%d): key %q on subtask %d (share %g of it)", p, kp.Key.Text, kp.Subtask, kp.SubtaskShare)
			}
		}
	}
	for _, tc := range []struct {
		p    int
		want string
	}{
		{0, "Operator parallelism not within bounds: 0"},
		{maxP + 1, "Maximum parallelism must not be smaller than parallelism."},
	} {
		if _, err := s.AtParallelism(tc.p); err == nil || err.Error() != tc.want {
			t.Errorf("AtParallelism(%d) = %v, want %s", tc.p, err, tc.want)
		}
	}
}

func TestErrors(t *testing.T) {
	s := NewSummary(10, 128)
	for i := range MaxErrorMessages + 5 {
		for range i + 1 {
			s.AddError(fmt.Errorf("error %d", i))
		}
	}
	s.AddError(errors.New("error 0"))
	errs := s.Errors()
	if len(errs) != MaxErrorMessages {
		t.Fatalf("Errors() has %d messages, want %d", len(errs), MaxErrorMessages)
	}
	if want := (ErrorCount{Message: fmt.Sprintf("error %d", MaxErrorMessages-1), Count: MaxErrorMessages}); errs[0] != want {
		t.Errorf("Errors()[0] = %+v, want %+v", errs[0], want)
	}
	if want := (ErrorCount{Message: "error 0", Count: 2}); errs[len(errs)-2] != want {
		t.Errorf("Errors()[%d] = %+v, want %+v", len(errs)-2, errs[len(errs)-2], want)
	}
	n := MaxErrorMessages + 5
	if got, want := s.Failed(), int64(n*(n+1)/2+1); got != want || s.Records() != 0 {
		t.Errorf("Failed() = %d, Records() = %d, want %d and 0", got, s.Records(), want)
	}
}

// TestVerdict builds a stream where one key carries 31% of the records and
// checks the verdict's sentences against subtasks computed with assign.
func TestVerdict(t *testing.T) {
	const maxP = 128
	s := NewSummary(1000, maxP)
	hot, second, third := stringKey("customer-42"), stringKey("customer-7"), stringKey("customer-9")
	for range 310 {
		s.Add(hot)
	}
	for range 60 {
		s.Add(second)
	}
	for range 30 {
		s.Add(third)
	}
	for i := range 600 {
		s.Add(stringKey("other-" + strconv.Itoa(i)))
	}
	v := s.Verdict(8, 6, 11)
	if v.Current != 8 || v.From != 6 || v.To != 11 || v.Records != 1000 || len(v.Loads) != 6 {
		t.Fatalf("Verdict(8, 6, 11) = current %d, range %d-%d, %d records, %d loads", v.Current, v.From, v.To, v.Records, len(v.Loads))
	}
	if len(v.HotKeys) != 1 || v.HotKeys[0].Key.Text != "customer-42" || v.HotKeys[0].Share != 0.31 {
		t.Fatalf("Verdict hot keys = %+v, want customer-42 alone with 31%%", v.HotKeys)
	}
	kg := assign.KeyGroupForHash(hot.Hash, maxP)
	var subs []string
	for p := 6; p <= 11; p++ {
		subs = append(subs, strconv.Itoa(assign.OperatorIndex(maxP, p, kg)))
	}
	l8, _ := s.AtParallelism(8)
	joined := strings.Join(v.Sentences, "\n")
	for _, want := range []string{
		fmt.Sprintf("at the current parallelism 8, subtask %d is the busiest with %s of the records", l8.Busiest, pct(l8.Share)),
		`key "customer-42" alone carries 31% of the records: no parallelism spreads it; it lands on subtask`,
		`the two heaviest keys, "customer-42" and "customer-7",`,
		`the three heaviest keys, "customer-42", "customer-7" and "customer-9",`,
		"the busiest subtask carries the least at p = ",
	} {
		if !strings.Contains(joined, want) {
			t.Errorf("Verdict sentences lack %q:\n%s", want, joined)
		}
	}
	if !slices.ContainsFunc(v.Sentences, func(s string) bool {
		return strings.HasPrefix(s, `key "customer-42"`) && (strings.Contains(s, "at every p between 6 and 11") == !slices.ContainsFunc(subs, func(x string) bool { return x != subs[0] }))
	}) {
		t.Errorf("hot key sentence does not match its subtasks %v:\n%s", subs, joined)
	}
	sep := v.Separations[0]
	for p := 6; p <= 11; p++ {
		apart := assign.OperatorIndex(maxP, p, kg) != assign.OperatorIndex(maxP, p, assign.KeyGroupForHash(second.Hash, maxP))
		if slices.Contains(sep.Apart, p) != apart || slices.Contains(sep.Together, p) == apart {
			t.Errorf("p=%d: two heaviest keys apart %t, separation %+v", p, apart, sep)
		}
	}
	t.Logf("verdict:\n%s", joined)

	if v := NewSummary(10, maxP).Verdict(0, 200, 4); v.From != 4 || v.To != 128 || v.Current != 0 ||
		!slices.Equal(v.Sentences, []string{"parallelism runs from 1 to the max parallelism 128: the range 4–200 is cut to 4–128", "no records sampled yet"}) {
		t.Errorf("empty Verdict(0, 200, 4) = %+v", v)
	}
}

// Few subtasks are always evenly loaded, each taking many keys, and always
// busier: with one key at 45 %, p = 2 is the most even in 2–12 and every
// subtask carries more than today's busiest at p = 6. The verdict does not
// offer it; it says where the busiest subtask carries the least.
func TestVerdictOffersNoTrivialEvenSpread(t *testing.T) {
	const maxP = 128
	s := NewSummary(1000, maxP)
	for range 450 {
		s.Add(stringKey("customer-42"))
	}
	for i := range 550 {
		s.Add(stringKey("other-" + strconv.Itoa(i)))
	}
	v := s.Verdict(6, 2, 12)
	joined := strings.Join(v.Sentences, "\n")
	if strings.Contains(joined, "most even spread") {
		t.Errorf("the verdict offers an even spread that loads the busiest subtask more than p = 6 does:\n%s", joined)
	}
	best := v.Loads[0]
	for _, l := range v.Loads {
		if l.Share < best.Share*0.99 {
			best = l
		}
	}
	if want := fmt.Sprintf("the busiest subtask carries the least at p = %d: subtask %d, %s", best.Parallelism, best.Busiest, pct(best.Share)); best.Parallelism != 6 && !strings.Contains(joined, want) {
		t.Errorf("the verdict lacks %q:\n%s", want, joined)
	}
	t.Logf("verdict:\n%s", joined)
}

func TestRuns(t *testing.T) {
	for _, tc := range []struct {
		in   []int
		want string
	}{
		{nil, ""}, {[]int{6}, "6"}, {[]int{6, 7}, "6, 7"}, {[]int{6, 7, 9, 10, 11}, "6, 7, 9–11"}, {[]int{1, 3, 4, 5, 8}, "1, 3–5, 8"},
	} {
		if got := runs(tc.in); got != tc.want {
			t.Errorf("runs(%v) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

// benchTexts are 1,000,000 string keys, Zipf-distributed over 200,000
// distinct keys as a skewed topic would give: with 1,000 counters about 41%
// of them take over a counter, so the eviction path runs too.
func benchTexts() []string {
	r := rand.New(rand.NewPCG(1, 2))
	z := rand.NewZipf(r, 1.05, 1, 200_000-1)
	texts := make([]string, 1_000_000)
	for i := range texts {
		texts[i] = "customer-" + strconv.FormatUint(z.Uint64(), 10)
	}
	return texts
}

// BenchmarkSummaryAdd1MStringKeys adds benchTexts' 1,000,000 string keys
// (Java hashCode, key group at max parallelism 128 and the summary's
// update) to a new Summary of 1,000 counters.
func BenchmarkSummaryAdd1MStringKeys(b *testing.B) {
	texts := benchTexts()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	b.ResetTimer()
	for b.Loop() {
		s := NewSummary(1000, 128)
		for _, t := range texts {
			s.Add(Key{Text: t, Hash: assign.StringHashCode(t)})
		}
	}
	b.StopTimer()
	runtime.ReadMemStats(&after)
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(len(texts)), "ns/record")
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/1e6, "ms/1M-keys")
	b.ReportMetric(float64(after.TotalAlloc-before.TotalAlloc)/float64(b.N)/1e6, "MB-alloc/op")
}

// BenchmarkHashOnly1MStringKeys is the floor under
// BenchmarkSummaryAdd1MStringKeys: the same keys' Java hashCode and key
// group alone (assign's BenchmarkKeyGroups1MStringKeys on these keys), to
// compare the two in one run on a busy machine.
func BenchmarkHashOnly1MStringKeys(b *testing.B) {
	texts := benchTexts()
	b.ResetTimer()
	for b.Loop() {
		var sink int
		for _, t := range texts {
			sink += assign.KeyGroupForHash(assign.StringHashCode(t), 128)
		}
		_ = sink
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/1e6, "ms/1M-keys")
}

func TestCounterIsOneCacheLine(t *testing.T) {
	if n := unsafe.Sizeof(counter{}); n != 64 {
		t.Errorf("counter is %d bytes, want 64", n)
	}
}

// indexed counts the index's entries, checking each finds its counter.
func (s *Summary) indexed() int {
	n := 0
	for _, sl := range s.index {
		if sl.c != 0 {
			n++
			c := s.counters[sl.c-1]
			if sl.h != c.h || c.slot < 0 || s.index[c.slot] != sl || s.find(c.h, Key{c.text, c.hash}) != sl.c-1 {
				panic(fmt.Sprintf("index slot for %q does not find its counter", c.text))
			}
		}
	}
	return n
}

// TestVerdictKeyOnOneSubtask: a key in key group 0 stays on subtask 0 at
// every parallelism, and the verdict says so in one sentence.
func TestVerdictKeyOnOneSubtask(t *testing.T) {
	const maxP = 128
	var hot Key
	for i := 0; ; i++ {
		if hot = stringKey("k" + strconv.Itoa(i)); assign.KeyGroupForHash(hot.Hash, maxP) == 0 {
			break
		}
	}
	s := NewSummary(100, maxP)
	for i := range 100 {
		s.Add(hot)
		s.Add(stringKey("cold-" + strconv.Itoa(i)))
	}
	v := s.Verdict(8, 6, 11)
	want := fmt.Sprintf("key %q alone carries 50%% of the records: no parallelism spreads it; it lands on subtask 0 at every p between 6 and 11", hot.Text)
	if !slices.Contains(v.Sentences, want) {
		t.Errorf("Verdict sentences lack %q:\n%s", want, strings.Join(v.Sentences, "\n"))
	}
	if len(v.HotKeys) != 1 || !slices.Equal(v.HotKeys[0].Subtasks, []int{0, 0, 0, 0, 0, 0}) || v.HotKeys[0].MinShare != 0.5 {
		t.Errorf("Verdict hot keys = %+v", v.HotKeys)
	}
}
