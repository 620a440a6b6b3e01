package main

import (
	"encoding/json"
	"fmt"
	"hash/fnv"
	"math/rand/v2"
	"slices"
	"strconv"
	"time"
)

// vertexGen produces the compact live update of one source-vertex view:
//
//	{"seq":N,"at":<unix ms>,"shape":"<layout hash>",
//	 "p":[[lag,lagSecondsTenths,rateTenths],...],   one per partition, row order
//	 "s":[[rate,lag,lagSeconds,busyPermille],...]}  one per subtask
//
// Numbers move like a real job's: per-partition rates around a skewed
// base, lag as a random walk, a couple of subtasks falling behind.
type vertexGen struct {
	rng      *rand.Rand
	seq      int64
	shape    string
	subtasks int
	owner    []int     // subtask of each row
	base     []float64 // base rate of each row, records/s
	rate     []float64 // current rate of each row, records/s
	lag      []float64 // current lag of each row, records
	slow     []bool    // subtask falling behind
	buf      []byte
}

// newVertexGen lays out partitions over subtasks the way Flink's
// KafkaSourceEnumerator does (owner = (startIndex + partition) mod
// parallelism) and orders the rows by subtask, then partition.
func newVertexGen(partitions, subtasks int, seed uint64) *vertexGen {
	const topic = "orders"
	g := &vertexGen{
		rng:      rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15)),
		subtasks: subtasks,
		slow:     make([]bool, subtasks),
	}
	start := int((javaStringHash(topic)*31)&0x7fffffff) % subtasks
	type row struct{ partition, subtask int }
	rows := make([]row, partitions)
	for p := range rows {
		rows[p] = row{p, (start + p) % subtasks}
	}
	slices.SortFunc(rows, func(a, b row) int {
		if a.subtask != b.subtask {
			return a.subtask - b.subtask
		}
		return a.partition - b.partition
	})
	h := fnv.New64a()
	fmt.Fprintf(h, "%s/%d/%d", topic, partitions, subtasks)
	for _, r := range rows {
		g.owner = append(g.owner, r.subtask)
		fmt.Fprintf(h, ",%d:%d", r.partition, r.subtask)
		// Skewed keys: most partitions 20-400 records/s, one in a hundred hot.
		base := 20 + 380*g.rng.Float64()*g.rng.Float64()
		if g.rng.IntN(100) == 0 {
			base *= 10
		}
		g.base = append(g.base, base)
		g.rate = append(g.rate, base)
		g.lag = append(g.lag, base*g.rng.Float64()*2)
	}
	g.shape = strconv.FormatUint(h.Sum64(), 16)
	g.slow[g.rng.IntN(subtasks)] = true
	g.slow[g.rng.IntN(subtasks)] = true
	return g
}

// javaStringHash is Java's String.hashCode, which Flink uses for the
// topic's start index.
func javaStringHash(s string) int32 {
	var h int32
	for _, r := range s {
		h = 31*h + r
	}
	return h
}

// next advances one second and returns the update, stamped with at. The
// returned bytes are reused by the following call.
func (g *vertexGen) next(at time.Time) json.RawMessage {
	g.seq++
	type sub struct {
		rate, lag, maxLagSec float64
	}
	subs := make([]sub, g.subtasks)
	b := g.buf[:0]
	b = append(b, `{"seq":`...)
	b = strconv.AppendInt(b, g.seq, 10)
	b = append(b, `,"at":`...)
	b = strconv.AppendInt(b, at.UnixMilli(), 10)
	b = append(b, `,"shape":"`...)
	b = append(b, g.shape...)
	b = append(b, `","p":[`...)
	for i := range g.owner {
		s := g.owner[i]
		// Rate drifts around its base; lag grows when the subtask is slow.
		g.rate[i] = max(0, g.rate[i]+(g.base[i]-g.rate[i])*0.2+g.base[i]*0.1*g.rng.NormFloat64())
		drift := g.base[i] * 0.05 * g.rng.NormFloat64()
		if g.slow[s] {
			drift += g.base[i] * 0.3
		} else {
			drift -= g.lag[i] * 0.1
		}
		g.lag[i] = max(0, g.lag[i]+drift)
		lagSec := 0.0
		if g.rate[i] > 0 {
			lagSec = g.lag[i] / g.rate[i]
		}
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, '[')
		b = strconv.AppendInt(b, int64(g.lag[i]), 10)
		b = append(b, ',')
		b = strconv.AppendInt(b, int64(lagSec*10), 10)
		b = append(b, ',')
		b = strconv.AppendInt(b, int64(g.rate[i]*10), 10)
		b = append(b, ']')
		subs[s].rate += g.rate[i]
		subs[s].lag += g.lag[i]
		subs[s].maxLagSec = max(subs[s].maxLagSec, lagSec)
	}
	b = append(b, `],"s":[`...)
	for s, st := range subs {
		busy := 300 + 400*g.rng.Float64()
		if g.slow[s] {
			busy = 1000
		}
		if s > 0 {
			b = append(b, ',')
		}
		b = append(b, '[')
		b = strconv.AppendInt(b, int64(st.rate), 10)
		b = append(b, ',')
		b = strconv.AppendInt(b, int64(st.lag), 10)
		b = append(b, ',')
		b = strconv.AppendInt(b, int64(st.maxLagSec), 10)
		b = append(b, ',')
		b = strconv.AppendInt(b, int64(busy), 10)
		b = append(b, ']')
	}
	b = append(b, "]}"...)
	g.buf = b
	return b
}
