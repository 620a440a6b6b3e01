//go:build e2e

package e2e

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"
)

// committedGolden is the set of golden vectors the unit tests check.
var committedGolden = filepath.Join("..", "assign", "testdata", "golden")

// TestGoldenVectorsPerLine runs the golden-vector generator
// (flinkjob/golden, skewscope.golden.GoldenVectors) on each Flink line's own
// classpath, as Maven resolved it for the line's module with its table
// modules (golden-classpath.txt), and fails on any byte that differs from
// assign/testdata/golden: the committed vectors, the SQL key rows of
// key_row.csv included, must hold on every line skewscope supports, not
// only the one that wrote them.
func TestGoldenVectorsPerLine(t *testing.T) {
	buildJob(t)
	gen, err := filepath.Abs(filepath.Join(flinkjobDir, "golden", "target", "classes"))
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range selectedLines(t) {
		t.Run(line.Name, func(t *testing.T) {
			start := time.Now()
			out := workDir(t, "golden-"+line.Name)
			// The line's jars without the job's classes: Flink, its table
			// modules (for the SQL key rows) and the Kafka connector of that
			// line.
			cp := goldenClasspath(t, line.Module)
			cmd := exec.Command("java", "-cp", gen+string(os.PathListSeparator)+cp, "skewscope.golden.GoldenVectors", out)
			var log bytes.Buffer
			cmd.Stdout, cmd.Stderr = &log, &log
			if err := cmd.Run(); err != nil {
				t.Fatalf("GoldenVectors on Flink %s: %v\n%s", line.Name, err, tail(log.String(), 40))
			}
			if diff := compareGolden(committedGolden, out); diff != "" {
				t.Fatalf("Flink %s writes golden vectors that differ from %s: %s (regenerated files kept in %s)", line.Name, committedGolden, diff, out)
			}
			t.Logf("Flink %s: %d files regenerated and identical in %s", line.Name, countCSV(t, out), time.Since(start).Round(10*time.Millisecond))
		})
	}
}

// goldenClasspath is the classpath Maven resolved for a line's module with
// its provided table modules (flink-table-common, -runtime and -planner),
// which the job itself does not load.
func goldenClasspath(t *testing.T, module string) string {
	t.Helper()
	cp, err := os.ReadFile(filepath.Join(flinkjobDir, module, "target", "golden-classpath.txt"))
	if err != nil {
		t.Fatalf("read golden classpath of %s: %v", module, err)
	}
	return strings.TrimSpace(string(cp))
}

// compareGolden compares the CSV files of want and got byte for byte and
// describes the first difference ("" when there is none): a missing or
// extra file, or the first differing row with its line number.
func compareGolden(want, got string) string {
	wantFiles, err := csvFiles(want)
	if err != nil {
		return err.Error()
	}
	gotFiles, err := csvFiles(got)
	if err != nil {
		return err.Error()
	}
	for _, name := range wantFiles {
		if !slices.Contains(gotFiles, name) {
			return fmt.Sprintf("%s is not written", name)
		}
	}
	for _, name := range gotFiles {
		if !slices.Contains(wantFiles, name) {
			return fmt.Sprintf("%s is written but not committed", name)
		}
	}
	for _, name := range wantFiles {
		w, err := os.ReadFile(filepath.Join(want, name))
		if err != nil {
			return err.Error()
		}
		g, err := os.ReadFile(filepath.Join(got, name))
		if err != nil {
			return err.Error()
		}
		if bytes.Equal(w, g) {
			continue
		}
		return name + ": " + firstDifference(w, g)
	}
	return ""
}

// firstDifference names the first line (1-based, the header is line 1)
// where a and b differ.
func firstDifference(want, got []byte) string {
	wl := strings.SplitAfter(string(want), "\n")
	gl := strings.SplitAfter(string(got), "\n")
	for i := 0; i < len(wl) || i < len(gl); i++ {
		var w, g string
		if i < len(wl) {
			w = wl[i]
		}
		if i < len(gl) {
			g = gl[i]
		}
		if w != g {
			return fmt.Sprintf("line %d is %q, committed %q", i+1, g, w)
		}
	}
	return "the files differ"
}

func csvFiles(dir string) ([]string, error) {
	m, err := filepath.Glob(filepath.Join(dir, "*.csv"))
	if err != nil {
		return nil, err
	}
	if len(m) == 0 {
		return nil, fmt.Errorf("no CSV files in %s", dir)
	}
	names := make([]string, len(m))
	for i, p := range m {
		names[i] = filepath.Base(p)
	}
	sort.Strings(names)
	return names, nil
}

func countCSV(t *testing.T, dir string) int {
	t.Helper()
	names, err := csvFiles(dir)
	if err != nil {
		t.Fatal(err)
	}
	return len(names)
}
