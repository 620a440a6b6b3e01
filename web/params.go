package web

import (
	"net/url"
	"strconv"
	"strings"

	"github.com/skewscope/skewscope/assign"
	"github.com/skewscope/skewscope/internal/quote"
)

// query wraps url.Values with parsers whose errors name the parameter and
// the accepted range.
type query struct{ url.Values }

// has reports whether name was given with a non-empty value.
func (q query) has(name string) bool { return strings.TrimSpace(q.Get(name)) != "" }

// single returns the one value of name, refusing repeats so that
// "?parallelism=4&parallelism=8" is not silently read as 4.
func (q query) single(name string) (string, error) {
	vs := q.Values[name]
	if len(vs) > 1 {
		return "", badInput(name, "given %d times; give it once", len(vs))
	}
	if len(vs) == 0 {
		return "", nil
	}
	return strings.TrimSpace(vs[0]), nil
}

// intIn parses name as an integer in lo..hi. A missing parameter returns
// def, or an error when required.
func (q query) intIn(name string, lo, hi, def int, required bool) (int, error) {
	s, err := q.single(name)
	if err != nil {
		return 0, err
	}
	if s == "" {
		if required {
			return 0, badInput(name, "required: an integer in %d..%d", lo, hi)
		}
		return def, nil
	}
	v, err := strconv.ParseInt(s, 10, 64)
	if err != nil || v < int64(lo) || v > int64(hi) {
		return 0, badInput(name, "%s is not an integer in %d..%d", quote.Clip(s), lo, hi)
	}
	return int(v), nil
}

// parallelism parses a Flink parallelism (1..32768).
func (q query) parallelism(name string, required bool) (int, error) {
	return q.intIn(name, 1, assign.UpperBoundMaxParallelism, 0, required)
}

// maxParallelism parses maxParallelism and resolves it with resolveMaxP.
func (q query) maxParallelism(name string, p int, pName string) (maxP int, defaulted bool, err error) {
	maxP, err = q.intIn(name, 1, assign.UpperBoundMaxParallelism, 0, false)
	if err != nil {
		return 0, false, err
	}
	return resolveMaxP(name, maxP, p, pName)
}

// resolveMaxP applies the API's rules to a max parallelism given as an
// integer (0: not given): Flink's default for p (or for parallelism 1 when
// p is 0), else a value in 1..32768 that is at least p. defaulted reports
// whether the default was used.
func resolveMaxP(name string, maxP, p int, pName string) (int, bool, error) {
	switch {
	case maxP == 0:
		d, _ := assign.DefaultMaxParallelism(max(p, 1))
		return d, true, nil
	case assign.CheckParallelism(maxP) != nil:
		return 0, false, badInput(name, "%d is not in 1..%d", maxP, assign.UpperBoundMaxParallelism)
	case p > maxP:
		return 0, false, badInput(name, "%d is smaller than %s %d; Flink requires maxParallelism >= parallelism", maxP, pName, p)
	}
	return maxP, false, nil
}
