package assign

import (
	"encoding/csv"
	"errors"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"testing"
)

// The golden vectors are produced by Flink's own classes. The set in
// testdata/golden is part of the repository (e2e/flinkjob/golden writes
// it, and the e2e tier checks that every Flink line writes the same bytes);
// it must be there. An extra set, from $SKEWSCOPE_GOLDEN_DIR or else
// ../shared/golden beside the repository, is checked too when it exists.
type goldenSet struct {
	name, dir string
}

func goldenSets(t testing.TB) []goldenSet {
	t.Helper()
	repo := filepath.Join("testdata", "golden")
	if _, err := os.Stat(filepath.Join(repo, "README.md")); err != nil {
		t.Fatalf("golden vectors missing from the repository: %v", err)
	}
	sets := []goldenSet{{"repo", repo}}
	extra := os.Getenv("SKEWSCOPE_GOLDEN_DIR")
	if extra == "" {
		extra = filepath.Join("..", "..", "shared", "golden")
	}
	if _, err := os.Stat(filepath.Join(extra, "README.md")); err == nil {
		sets = append(sets, goldenSet{"extra", extra})
	}
	return sets
}

// eachGoldenSet runs f as a subtest per golden set, "repo" and "extra".
func eachGoldenSet(t *testing.T, f func(t *testing.T, dir string)) {
	t.Helper()
	for _, s := range goldenSets(t) {
		t.Run(s.name, func(t *testing.T) {
			t.Logf("golden vectors from %s", s.dir)
			f(t, s.dir)
		})
	}
}

// readGolden returns the rows of a golden CSV, header checked and dropped.
// Fields keep leading and trailing whitespace, as the files require.
func readGolden(t testing.TB, dir, name string, header ...string) [][]string {
	t.Helper()
	f, err := os.Open(filepath.Join(dir, name))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	r := csv.NewReader(f)
	r.FieldsPerRecord = len(header)
	rows, err := r.ReadAll()
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	if len(rows) < 2 {
		t.Fatalf("%s: no data rows", name)
	}
	for i, h := range header {
		if rows[0][i] != h {
			t.Fatalf("%s: column %d is %q, want %q", name, i, rows[0][i], h)
		}
	}
	return rows[1:]
}

func atoi(t testing.TB, s string) int {
	t.Helper()
	v, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		t.Fatalf("bad integer %q in golden file: %v", s, err)
	}
	return int(v)
}

func TestGoldenDefaultMaxParallelism(t *testing.T) {
	eachGoldenSet(t, func(t *testing.T, dir string) {
		rows := readGolden(t, dir, "default_max_parallelism.csv", "parallelism", "max_parallelism")
		for _, r := range rows {
			p, want := atoi(t, r[0]), atoi(t, r[1])
			got, err := DefaultMaxParallelism(p)
			if err != nil || got != want {
				t.Errorf("DefaultMaxParallelism(%d) = %d, %v, want %d", p, got, err, want)
			}
		}
		t.Logf("%d rows", len(rows))
	})
}

func TestGoldenMurmur(t *testing.T) {
	eachGoldenSet(t, func(t *testing.T, dir string) {
		rows := readGolden(t, dir, "murmur.csv", "int_input", "murmur")
		for _, r := range rows {
			in, want := atoi(t, r[0]), atoi(t, r[1])
			if got := MurmurHash(int32(in)); int(got) != want {
				t.Errorf("MurmurHash(%d) = %d, want %d", in, got, want)
			}
		}
		t.Logf("%d rows", len(rows))
	})
}

func TestGoldenKeyGroups(t *testing.T) {
	eachGoldenSet(t, func(t *testing.T, dir string) {
		for _, tc := range []struct {
			file string
			typ  string
		}{
			{"key_group_string.csv", "string"},
			{"key_group_int.csv", "int"},
			{"key_group_long.csv", "long"},
		} {
			t.Run(tc.typ, func(t *testing.T) {
				kt, err := ParseKeyType(tc.typ)
				if err != nil {
					t.Fatal(err)
				}
				rows := readGolden(t, dir, tc.file, "key", "java_hash", "max_parallelism", "key_group")
				for _, r := range rows {
					hash, maxP, want := atoi(t, r[1]), atoi(t, r[2]), atoi(t, r[3])
					got, err := HashKey(kt, r[0])
					if err != nil || int(got) != hash {
						t.Errorf("HashKey(%s, %q) = %d, %v, want %d", tc.typ, r[0], got, err, hash)
						continue
					}
					if kg := KeyGroupForHash(got, maxP); kg != want {
						t.Errorf("KeyGroupForHash(%d, %d) = %d, want %d", got, maxP, kg, want)
					}
				}
				t.Logf("%d rows", len(rows))
			})
		}
	})
}

func TestGoldenTuple2(t *testing.T) {
	eachGoldenSet(t, func(t *testing.T, dir string) {
		kt, err := ParseKeyType("Tuple2<String, Integer>")
		if err != nil {
			t.Fatal(err)
		}
		rows := readGolden(t, dir, "key_group_tuple2.csv", "f0", "f1", "java_hash", "max_parallelism", "key_group")
		for _, r := range rows {
			hash, maxP, want := atoi(t, r[2]), atoi(t, r[3]), atoi(t, r[4])
			got, err := HashTuple(kt, []any{r[0], r[1]})
			if err != nil || int(got) != hash {
				t.Errorf("HashTuple(%q, %q) = %d, %v, want %d", r[0], r[1], got, err, hash)
				continue
			}
			if kg := KeyGroupForHash(got, maxP); kg != want {
				t.Errorf("KeyGroupForHash(%d, %d) = %d, want %d", got, maxP, kg, want)
			}
		}
		t.Logf("%d rows", len(rows))
	})
}

func TestGoldenKeyToOperator(t *testing.T) {
	eachGoldenSet(t, func(t *testing.T, dir string) {
		rows := readGolden(t, dir, "key_to_operator.csv", "key", "max_parallelism", "parallelism", "key_group", "operator_index")
		for _, r := range rows {
			maxP, p, wantKG, wantOp := atoi(t, r[1]), atoi(t, r[2]), atoi(t, r[3]), atoi(t, r[4])
			kg := KeyGroupForHash(StringHashCode(r[0]), maxP)
			if kg != wantKG {
				t.Errorf("key group of %q at maxP %d = %d, want %d", r[0], maxP, kg, wantKG)
			}
			if op := OperatorIndex(maxP, p, kg); op != wantOp {
				t.Errorf("OperatorIndex(%d, %d, %d) = %d, want %d", maxP, p, kg, op, wantOp)
			}
		}
		t.Logf("%d rows", len(rows))
	})
}

func TestGoldenOperatorIndex(t *testing.T) {
	eachGoldenSet(t, func(t *testing.T, dir string) {
		rows := readGolden(t, dir, "operator_index.csv", "max_parallelism", "parallelism", "key_group", "operator_index")
		for _, r := range rows {
			maxP, p, kg, want := atoi(t, r[0]), atoi(t, r[1]), atoi(t, r[2]), atoi(t, r[3])
			if got := OperatorIndex(maxP, p, kg); got != want {
				t.Errorf("OperatorIndex(%d, %d, %d) = %d, want %d", maxP, p, kg, got, want)
			}
		}
		t.Logf("%d rows", len(rows))
	})
}

func TestGoldenKeyGroupRange(t *testing.T) {
	eachGoldenSet(t, func(t *testing.T, dir string) {
		rows := readGolden(t, dir, "key_group_range.csv", "max_parallelism", "parallelism", "operator_index", "start", "end")
		for _, r := range rows {
			maxP, p, i := atoi(t, r[0]), atoi(t, r[1]), atoi(t, r[2])
			want := KeyGroupRange{Start: atoi(t, r[3]), End: atoi(t, r[4])}
			got, err := KeyGroupRangeFor(maxP, p, i)
			if err != nil || got != want {
				t.Errorf("KeyGroupRangeFor(%d, %d, %d) = %v, %v, want %v", maxP, p, i, got, err, want)
			}
		}
		t.Logf("%d rows", len(rows))
	})
}

func TestGoldenKafkaSplitOwner(t *testing.T) {
	eachGoldenSet(t, func(t *testing.T, dir string) {
		rows := readGolden(t, dir, "kafka_split_owner.csv", "topic", "partition", "num_readers", "owner")
		for _, r := range rows {
			tp := TopicPartition{Topic: r[0], Partition: int32(atoi(t, r[1]))}
			n, want := atoi(t, r[2]), atoi(t, r[3])
			got, err := KafkaSplitOwner(tp, n)
			if err != nil || got != want {
				t.Errorf("KafkaSplitOwner(%v, %d) = %d, %v, want %d", tp, n, got, err, want)
			}
		}
		t.Logf("%d rows", len(rows))
	})
}

func TestGoldenJavaHashCode(t *testing.T) {
	eachGoldenSet(t, func(t *testing.T, dir string) {
		rows := readGolden(t, dir, "java_hashcode.csv", "type", "value", "bits_hex", "java_hash")
		for _, r := range rows {
			typ, value, bitsHex, want := r[0], r[1], r[2], atoi(t, r[3])
			kt, err := ParseKeyType(typ)
			if err != nil {
				t.Errorf("ParseKeyType(%q): %v", typ, err)
				continue
			}
			text := value
			if kt.Kind == KindChar {
				text = string(rune(atoi(t, value)))
			}
			got, err := HashKey(kt, text)
			if err != nil || int(got) != want {
				t.Errorf("HashKey(%s, %q) = %d, %v, want %d", typ, text, got, err, want)
			}
			// The raw bit pattern must give the same hash as the printed value.
			switch kt.Kind {
			case KindFloat:
				b, _ := strconv.ParseUint(bitsHex, 16, 32)
				if h := FloatHashCode(math.Float32frombits(uint32(b))); int(h) != want {
					t.Errorf("FloatHashCode(bits %s) = %d, want %d", bitsHex, h, want)
				}
			case KindDouble:
				b, _ := strconv.ParseUint(bitsHex, 16, 64)
				if h := DoubleHashCode(math.Float64frombits(b)); int(h) != want {
					t.Errorf("DoubleHashCode(bits %s) = %d, want %d", bitsHex, h, want)
				}
			}
		}
		t.Logf("%d rows", len(rows))
	})
}

func TestGoldenInvalidInputs(t *testing.T) {
	eachGoldenSet(t, func(t *testing.T, dir string) {
		rows := readGolden(t, dir, "invalid_inputs.csv", "function", "arg1", "arg2", "arg3", "exception", "message")
		for _, r := range rows {
			fn, msg := r[0], r[5]
			var err error
			switch fn {
			case "computeDefaultMaxParallelism":
				_, err = DefaultMaxParallelism(atoi(t, r[1]))
			case "checkParallelismPreconditions":
				err = CheckParallelism(atoi(t, r[1]))
			case "computeKeyGroupRangeForOperatorIndex":
				_, err = KeyGroupRangeFor(atoi(t, r[1]), atoi(t, r[2]), atoi(t, r[3]))
			case "assignToKeyGroup(null)":
				// The dashboard answers a null key (JSON null in a bulk
				// lookup) with ErrNullKey: its text must be Flink's.
				err = ErrNullKey
			case "kafka.getSplitOwner":
				_, err = KafkaSplitOwner(TopicPartition{Topic: r[1], Partition: int32(atoi(t, r[2]))}, atoi(t, r[3]))
			default:
				t.Errorf("golden row for unknown function %q: add a case", fn)
				continue
			}
			if err == nil {
				t.Errorf("%s(%s, %s, %s) = nil error, want %s %q", fn, r[1], r[2], r[3], r[4], msg)
				continue
			}
			if err.Error() != msg {
				t.Errorf("%s(%s, %s, %s) error = %q, want %q", fn, r[1], r[2], r[3], err, msg)
			}
			var pe *ParallelismError
			if r[4] == "java.lang.IllegalArgumentException" && !errors.As(err, &pe) {
				t.Errorf("%s: error %T, want *ParallelismError for %s", fn, err, r[4])
			}
		}
		t.Logf("%d rows", len(rows))
	})
}
