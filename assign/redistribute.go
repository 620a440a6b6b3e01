package assign

import "math/rand/v2"

// redistribute is the restore at parallelism q of the snapshot lists of the
// previous step: RoundRobinOperatorStateRepartitioner.repartitionState
// (flink-runtime, 1.20.3 L70-79 and repartitionSplitState L291; 2.2.0
// L71-80 and L294). Unchanged parallelism keeps each list; otherwise the
// lists are concatenated in old-subtask order and new subtask j receives the
// chunk starting at j*b + min(j, r) of length b + [j < r], b = T/q,
// r = T%q. A split whose possible positions span two chunks gets an
// undetermined owner.
func (m *restoreModel) redistribute(snaps [][]int32, q int) (lists, loIns [][]int32, pieces [][]RestorePiece) {
	p := len(snaps)
	lists = make([][]int32, q)
	loIns = make([][]int32, q)
	pieces = make([][]RestorePiece, q)
	st := &m.stats[m.step]
	total := 0
	for _, s := range snaps {
		total += len(s)
	}
	// Every list, bound and piece of this step lives in one array each; the
	// lists are capped so that appends reallocate.
	listSlab := scratch(m, &m.bufs.rList, total)
	loSlab := scratch(m, &m.bufs.rLo, total)
	if q == p {
		pieceSlab := make([]RestorePiece, 0, p)
		off := 0
		for j, snap := range snaps {
			n := len(snap)
			lists[j] = listSlab[off : off+n : off+n]
			loIns[j] = loSlab[off : off+n : off+n]
			off += n
			copy(lists[j], snap)
			for i, e := range snap {
				loIns[j][i] = m.el[e].lo
			}
			if n > 0 {
				pieceSlab = append(pieceSlab, RestorePiece{OldSubtask: j, Count: n})
				k := len(pieceSlab)
				pieces[j] = pieceSlab[k-1 : k : k]
			}
		}
		m.segment(lists, 0, func(j, _ int) int32 { return int32(j) })
		return lists, loIns, pieces
	}
	b, r := total/q, total%q
	chunkOf := func(pos int) int {
		if pos < r*(b+1) {
			return pos / (b + 1)
		}
		return r + (pos-r*(b+1))/b
	}
	chunkStart := func(j int) int { return j*b + min(j, r) }
	segSlab := scratch(m, &m.bufs.rSeg, total) // per new subtask: old subtask of each split
	segs := make([][]int32, q)
	for j := range q {
		lo, hi := chunkStart(j), chunkStart(j+1)
		lists[j] = listSlab[lo:hi:hi]
		loIns[j] = loSlab[lo:hi:hi]
		segs[j] = segSlab[lo:hi:hi]
	}
	// The concatenated lists are dealt in order: new subtask j takes
	// positions chunkStart(j) .. chunkStart(j+1)-1, so j only grows and the
	// pieces come in (j, old subtask) order.
	pieceSlab := make([]RestorePiece, 0, p+q)
	pieceOf := make([]int32, 0, p+q) // new subtask of each piece
	j, next := 0, chunkStart(1)
	off := 0
	for k, snap := range snaps {
		for i, e := range snap {
			pos := off + i
			for pos >= next {
				j++
				next = chunkStart(j + 1)
			}
			el := &m.el[e]
			pieceStart := max(chunkStart(j)-off, 0)
			if el.certain && el.lo != el.hi && chunkOf(off+int(el.lo)) != chunkOf(off+int(el.hi)) {
				el.certain = false
				st.newUncertain = append(st.newUncertain, e)
				st.causes |= el.why
			}
			li := int32(0)
			if el.certain {
				li = max(el.lo-int32(pieceStart), 0)
			}
			listSlab[pos], loSlab[pos], segSlab[pos] = e, li, int32(k)
			if n := len(pieceSlab); n > 0 && int(pieceOf[n-1]) == j && pieceSlab[n-1].OldSubtask == k {
				pieceSlab[n-1].Count++
			} else {
				pieceSlab = append(pieceSlab, RestorePiece{OldSubtask: k, Count: 1})
				pieceOf = append(pieceOf, int32(j))
			}
		}
		off += len(snap)
	}
	for s := 0; s < len(pieceSlab); {
		t := s
		for t < len(pieceSlab) && pieceOf[t] == pieceOf[s] {
			t++
		}
		pieces[pieceOf[s]] = pieceSlab[s:t:t]
		s = t
	}
	for j := range lists {
		if len(pieces[j]) > 1 {
			st.piecesMixed = true
		}
		if m.rng != nil && len(pieces[j]) > 1 {
			lists[j], loIns[j], segs[j] = shufflePieces(m.rng, lists[j], loIns[j], segs[j])
		}
	}
	m.segment(lists, 0, func(j, i int) int32 { return segs[j][i] })
	return lists, loIns, pieces
}

// shufflePieces reorders whole pieces (runs of one old subtask) at random, as
// the HashMap<StreamStateHandle, ...> of repartitionSplitState may.
func shufflePieces(rng *rand.Rand, list, lo, seg []int32) ([]int32, []int32, []int32) {
	type piece struct{ s, t int }
	var ps []piece
	for s := 0; s < len(list); {
		t := s
		for t < len(list) && seg[t] == seg[s] {
			t++
		}
		ps = append(ps, piece{s, t})
		s = t
	}
	rng.Shuffle(len(ps), func(i, j int) { ps[i], ps[j] = ps[j], ps[i] })
	nl, nlo, ns := make([]int32, 0, len(list)), make([]int32, 0, len(list)), make([]int32, 0, len(list))
	for _, p := range ps {
		nl = append(nl, list[p.s:p.t]...)
		nlo = append(nlo, lo[p.s:p.t]...)
		ns = append(ns, seg[p.s:p.t]...)
	}
	return nl, nlo, ns
}
