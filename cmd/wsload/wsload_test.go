package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"regexp"
	"strconv"
	"testing"
	"time"
)

// TestMain lets the test binary act as the server child: load re-executes
// os.Executable with -serve.
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

type vertexUpdate struct {
	Seq   int64
	At    int64
	Shape string
	P     [][]int64
	S     [][]int64
}

func TestVertexGen(t *testing.T) {
	const partitions, subtasks = 1000, 64
	g := newVertexGen(partitions, subtasks, 7)
	at := time.UnixMilli(1_750_000_000_123)
	var prev vertexUpdate
	for i := range 3 {
		raw := g.next(at)
		var u vertexUpdate
		dec := json.NewDecoder(bytes.NewReader(raw))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&u); err != nil {
			t.Fatalf("update %d: %v\n%.200s", i, err, raw)
		}
		if u.Seq != int64(i+1) || u.At != at.UnixMilli() || u.Shape == "" {
			t.Errorf("update %d: seq %d at %d shape %q, want seq %d at %d and a shape", i, u.Seq, u.At, u.Shape, i+1, at.UnixMilli())
		}
		if len(u.P) != partitions || len(u.S) != subtasks {
			t.Fatalf("update %d: %d partition rows, %d subtask rows; want %d, %d", i, len(u.P), len(u.S), partitions, subtasks)
		}
		// Subtask totals agree with their partitions (up to truncation).
		rate := make([]int64, subtasks)
		for r, p := range u.P {
			if len(p) != 3 || p[0] < 0 || p[1] < 0 || p[2] < 0 {
				t.Fatalf("update %d row %d = %v, want [lag,lagSecondsTenths,rateTenths] ≥ 0", i, r, p)
			}
			rate[g.owner[r]] += p[2]
		}
		for s, st := range u.S {
			if len(st) != 4 || st[3] < 0 || st[3] > 1000 {
				t.Fatalf("update %d subtask %d = %v, want [rate,lag,lagSeconds,busyPermille]", i, s, st)
			}
			if d := st[0] - rate[s]/10; d < -1 || d > int64(partitions/subtasks)+2 {
				t.Errorf("update %d subtask %d: rate %d, partitions sum to %d/10", i, s, st[0], rate[s])
			}
		}
		if i > 0 {
			if u.Shape != prev.Shape {
				t.Errorf("shape changed from %s to %s with the same layout", prev.Shape, u.Shape)
			}
			changed := 0
			for r := range u.P {
				if u.P[r][0] != prev.P[r][0] || u.P[r][2] != prev.P[r][2] {
					changed++
				}
			}
			if changed < partitions/2 {
				t.Errorf("update %d: only %d of %d partitions changed", i, changed, partitions)
			}
		}
		prev = u
	}
	if other := newVertexGen(partitions, subtasks+1, 7); other.shape == g.shape {
		t.Errorf("layouts over %d and %d subtasks share shape %s", subtasks, subtasks+1, g.shape)
	}
	// Rows are ordered by subtask.
	for r := 1; r < len(g.owner); r++ {
		if g.owner[r] < g.owner[r-1] {
			t.Fatalf("row %d owned by subtask %d after subtask %d", r, g.owner[r], g.owner[r-1])
		}
	}
}

func TestParseStat(t *testing.T) {
	line := []byte("4242 (ws load) (x)) S 1 4242 4242 0 -1 4194560 913 0 0 0 1234 567 0 0 20 0 9 0 1000 1200000 3000 18446744073709551615\n")
	u, s, err := parseStat(line)
	if err != nil || u != 12340*time.Millisecond || s != 5670*time.Millisecond {
		t.Errorf("parseStat = %v, %v, %v; want 12.34s, 5.67s", u, s, err)
	}
	if _, _, err := parseStat([]byte("4242 (x) S 1 2")); err == nil {
		t.Error("parseStat of a short line: no error")
	}
	peak, cur, err := parseStatus([]byte("Name:\twsload\nVmPeak:\t  900000 kB\nVmHWM:\t   65536 kB\nVmRSS:\t   40960 kB\n"))
	if err != nil || peak != 64<<20 || cur != 40<<20 {
		t.Errorf("parseStatus = %d, %d, %v; want 64 MiB, 40 MiB", peak, cur, err)
	}
	if _, _, err := parseStatus([]byte("VmRSS:\t1 kB\n")); err == nil {
		t.Error("parseStatus without VmHWM: no error")
	}
}

func TestUpdateHeader(t *testing.T) {
	seq, at, ok := updateHeader([]byte(`{"topic":"vertex:a/b/c","data":{"seq":17,"at":1750000000123,"shape":"ab","p":[[1,`))
	if !ok || seq != 17 || at != 1750000000123 {
		t.Errorf("updateHeader = %d, %d, %v; want 17, 1750000000123, true", seq, at, ok)
	}
	if _, _, ok := updateHeader([]byte(`{"subscribed":["vertex:a/b/c"]}`)); ok {
		t.Error("updateHeader of a subscribe ack: ok")
	}
}

// TestRunSmall runs the whole program, server child included, at a small
// size and checks the report's figures.
func TestRunSmall(t *testing.T) {
	for _, compress := range []bool{false, true} {
		t.Run("compress="+strconv.FormatBool(compress), func(t *testing.T) {
			var out, errOut bytes.Buffer
			args := []string{"-clients", "5", "-partitions", "500", "-subtasks", "8", "-for", "1s", "-interval", "100ms", "-compress=" + strconv.FormatBool(compress)}
			if err := run(context.Background(), args, &out, &errOut); err != nil {
				t.Fatalf("run: %v\n%s", err, errOut.String())
			}
			report := out.String()
			for _, re := range []string{
				`clients connected: +5/5 `,
				`updates published: +([6-9]|1[0-2]) in the window`,
				`messages received: +[1-9][0-9]+ `,
				`dropped clients: +0 .*connections lost: 0`,
				`delivery latency: +p50 \S+, p99 \S+, max \S+ \([1-9][0-9]+ samples\)`,
				`bytes per message: +[1-9][0-9]+ payload, [1-9][0-9]+ on the wire`,
				`server RSS: +peak \(VmHWM\) [0-9.]+ MiB`,
			} {
				if !regexp.MustCompile(re).MatchString(report) {
					t.Errorf("report does not match %q:\n%s", re, report)
				}
			}
			wire := regexp.MustCompile(`(\d+) payload, (\d+) on the wire`).FindStringSubmatch(report)
			if wire != nil {
				p, _ := strconv.Atoi(wire[1])
				w, _ := strconv.Atoi(wire[2])
				if compress && w >= p*3/4 {
					t.Errorf("compressed: %d bytes on the wire for %d of payload", w, p)
				}
				if !compress && w < p {
					t.Errorf("uncompressed: %d bytes on the wire for %d of payload", w, p)
				}
			}
		})
	}
}
