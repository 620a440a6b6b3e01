package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http/httptest"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/skewscope/skewscope/collectors/flink"
	"github.com/skewscope/skewscope/internal/fakejm"
)

// TestMain lets the test binary act as the fake JobManager child: measure
// re-executes os.Executable with -serve.
func TestMain(m *testing.M) {
	if len(os.Args) > 1 && os.Args[1] == "-serve" {
		if err := run(context.Background(), os.Args[1:], os.Stdout, os.Stderr); err != nil {
			os.Stderr.WriteString(err.Error() + "\n")
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// TestRun measures a small shape through the child process, with and
// without event time, and checks the printed figures: one row per poll,
// the fake's request count per poll, and event time's cost within its
// budget of one request per vertex per poll.
func TestRun(t *testing.T) {
	// Per poll after the first: /overview, /jobs/overview; per job
	// /jobs/:id, checkpoints, numRestarts, the source's details and one
	// values request per vertex (the sources' id lists and the other
	// vertices' details were read on the warm-up poll, the backpressure
	// level comes from the values). With event time at this shape the
	// source's ids (its splits' watermarks beside the offsets, the
	// watermark gauges of every vertex) still fit the same request lines.
	const jobs, vertices = 2, 3
	base := 2 + jobs*(3+1+vertices)
	for _, tc := range []struct {
		flag    string
		perPoll int
	}{
		{"-event-time=false", base},
		{"-event-time=true", base},
	} {
		if tc.perPoll-base > jobs*vertices {
			t.Errorf("%s: %d requests per poll, more than one per vertex over the %d without event time", tc.flag, tc.perPoll, base)
		}
		var out, errOut bytes.Buffer
		err := run(context.Background(), []string{"-jobs", strconv.Itoa(jobs), "-parallelism", "4", "-partitions", "8", "-polls", "2", tc.flag}, &out, &errOut)
		if err != nil {
			t.Fatalf("run %s: %v\nstderr: %s", tc.flag, err, errOut.String())
		}
		row := regexp.MustCompile(`(?m)^(warm-up|1|2|mean) +(\d+) +[0-9.]+ +[0-9.]+ +[0-9.]+% `)
		rows := row.FindAllStringSubmatch(out.String(), -1)
		if len(rows) != 4 {
			t.Fatalf("%s: %d poll rows, want warm-up, 1, 2, mean:\n%s", tc.flag, len(rows), out.String())
		}
		for _, r := range rows[1:] {
			if r[2] != strconv.Itoa(tc.perPoll) {
				t.Errorf("%s: poll %s: %s requests, want %d:\n%s", tc.flag, r[1], r[2], tc.perPoll, out.String())
			}
		}
		if want := fmt.Sprintf("metric-values %d req", tc.perPoll-2-jobs*3); !strings.Contains(out.String(), "summary:") || !strings.Contains(out.String(), want) {
			t.Errorf("%s: no summary or kind breakdown with %q:\n%s", tc.flag, want, out.String())
		}
	}
}

func TestParseShapes(t *testing.T) {
	got, err := parseShapes(defaultShapes)
	if err != nil || len(got) != 2 || got[0] != (shape{50, 64, 256}) || got[1] != (shape{500, 16, 64}) {
		t.Errorf("parseShapes(%q) = %v, %v", defaultShapes, got, err)
	}
	for _, bad := range []string{"", "50x64", "0x1x1", "1x40000x1", "1xax1"} {
		if _, err := parseShapes(bad); err == nil {
			t.Errorf("parseShapes(%q) accepted it", bad)
		}
	}
}

// TestCheckSnapshot: a complete snapshot of the fake passes; each kind of
// damage is named.
func TestCheckSnapshot(t *testing.T) {
	fc := fakeConfig(config{topics: []string{"orders", "payments.v1"}}, shape{jobs: 2, parallelism: 4, partitions: 8})
	h, err := fakejm.New(fc)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	defer srv.Close()
	poll := func() *flink.Snapshot {
		c, err := flink.NewCollector(flink.Config{Name: "t", URL: srv.URL, RequestTimeout: time.Minute}, nil)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		return c.PollOnce(context.Background())
	}
	if err := checkSnapshot(poll(), fc); err != nil {
		t.Fatalf("checkSnapshot(complete snapshot) = %v", err)
	}
	for _, c := range []struct {
		name   string
		damage func(s *flink.Snapshot)
		want   string
	}{
		{"poll error", func(s *flink.Snapshot) { s.Err = errors.New("boom") }, "boom"},
		{"job missing", func(s *flink.Snapshot) { s.Jobs = s.Jobs[1:] }, "1 jobs, want 2"},
		{"vertex error", func(s *flink.Snapshot) { s.Jobs[1].Vertices[2].Err = errors.New("vertex broke") }, "vertex broke"},
		{"subtasks missing", func(s *flink.Snapshot) { s.Jobs[0].Vertices[1].Subtasks = nil }, "0 subtasks, want 4"},
		{"partition missing", func(s *flink.Snapshot) {
			k := s.Jobs[0].Vertices[0].Kafka
			k.States = k.States[1:]
		}, "7 partitions observed"},
		{"wrong owner", func(s *flink.Snapshot) {
			st := &s.Jobs[0].Vertices[0].Kafka.States[0]
			st.Subtask = (st.Subtask + 1) % 4
		}, "Flink assigns it to"},
	} {
		s := poll()
		c.damage(s)
		if err := checkSnapshot(s, fc); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: checkSnapshot = %v, want an error with %q", c.name, err, c.want)
		}
	}
	if st := h.Stats(); st.Failed() != 0 {
		t.Errorf("the fake could not answer: %q", st.Unanswered)
	}
}
