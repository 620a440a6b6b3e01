package assign

import (
	"fmt"
	"slices"
	"strings"
)

func (m *restoreModel) notes(pieces [][]RestorePiece) []string {
	cfg := m.cfg
	h := cfg.history
	last := len(h) - 1
	var notes []string
	hist := strings.Trim(strings.ReplaceAll(fmt.Sprint(h), " ", " → "), "[]")
	rescaled := false
	for s := 1; s <= last; s++ {
		rescaled = rescaled || h[s] != h[s-1]
	}
	switch {
	case last == 0:
		notes = append(notes, "No restore in the history: every partition is placed by the fresh-start hash rule (KafkaSourceEnumerator.getSplitOwner), as in the fresh layout.")
	case !rescaled:
		notes = append(notes, fmt.Sprintf("History %s: every restore kept the parallelism, so each subtask got back exactly its own splits and the layout is the fresh-start hash rule (getSplitOwner).", hist))
	default:
		notes = append(notes, fmt.Sprintf("This layout depends on the history %s, not on the hash rule (getSplitOwner): at a restore with a different parallelism Flink deals each new subtask a contiguous chunk of the old subtasks' saved split lists (RoundRobinOperatorStateRepartitioner), and each saved list is in the reader's HashMap order.", hist))
	}
	offs := cfg.offsets
	if offs == StartingOffsetsEarliest {
		offs += " (the KafkaSourceBuilder default)"
	}
	notes = append(notes, fmt.Sprintf("Assumes the job started fresh at parallelism %d with all these partitions discovered at start, starting offsets %s, no stopping offsets, and no failover, split loss or partition discovery between savepoints.", h[0], offs))
	if cfg.line == ConnectorLine5 {
		notes = append(notes, "Assumes flink-connector-kafka 5.x: its enumerator sorts new splits by (topic, partition) before putting them into each reader's pending HashSet.")
	} else {
		notes = append(notes, "Assumes flink-connector-kafka 3.x/4.x: its enumerator first collects new splits in a HashSet filled in the topic subscriber's order, which is not known; ascending (topic, partition) order was assumed.")
	}
	if !cfg.startKnown {
		notes = append(notes, fmt.Sprintf("Starting offsets %s are resolved to real broker offsets by the enumerator, and they are part of each split's hash code: the order in which a reader first got its splits is unknown, so split ids sharing a HashMap bucket have an unknown order in its saved list.", cfg.offsets))
	}
	if len(cfg.newTopics) > 0 {
		n := 0
		for _, e := range m.el {
			if e.isNew {
				n++
			}
		}
		if n > 0 {
			notes = append(notes, fmt.Sprintf("%d partitions discovered after the last restore are placed by the hash rule at parallelism %d, after the restored splits; discovery batches after the first start at earliest offsets.", n, h[last]))
		}
	}
	if last > 0 && m.stats[last].piecesMixed {
		notes = append(notes, "Inside a new subtask the pieces from different old subtasks come in an order Flink does not fix (a HashMap keyed by random state-handle names); the lists show them in old-subtask order. Which partitions a subtask gets does not depend on it, but the order of its next savepoint can.")
	}
	earlier := false
	for s := 1; s <= last; s++ {
		st := m.stats[s]
		if len(st.newUncertain) == 0 {
			continue
		}
		if s < last {
			earlier = true
		}
		slices.Sort(st.newUncertain) // topics in input order, partitions ascending
		names := make([]string, 0, 6)
		for i, e := range st.newUncertain {
			if i == 5 {
				names = append(names, fmt.Sprintf("and %d more", len(st.newUncertain)-5))
				break
			}
			names = append(names, m.tp(e).SplitID())
		}
		notes = append(notes, fmt.Sprintf("Restore from %d to %d subtasks: the owner of %d partition(s) (%s) is not determined. They sit at a boundary between two new subtasks' chunks, and their position in the old saved list depends on %s.",
			st.from, st.to, len(st.newUncertain), strings.Join(names, ", "), causeText(st.causes, cfg.offsets)))
	}
	if earlier {
		notes = append(notes, "Owners became undetermined before the last restore, so the later layout is approximate: partitions after an undetermined one in a saved list may sit one or more places off.")
	}
	setTrees, mapTrees, risk := 0, 0, false
	for _, st := range m.stats {
		setTrees += st.setTrees
		mapTrees += st.mapTrees
		risk = risk || st.mapTreeRisk
	}
	if setTrees > 0 {
		notes = append(notes, fmt.Sprintf("%d bin(s) of the enumerator's HashSet<KafkaPartitionSplit> grew to 9 splits and became red-black trees, whose order depends on identity hash codes (random per JVM); the splits in those bins have an unknown order.", setTrees))
	}
	if mapTrees > 0 || risk {
		notes = append(notes, "Some bin of a reader's HashMap of split ids would or might reach 9 ids, which turns it into a red-black tree (or, below 64 bins, resizes the table early); Flink's order there is deterministic but not modelled here, so it is treated as unknown.")
	}
	return notes
}

func causeText(c uint8, offsets string) string {
	var parts []string
	if c&reasonPieces != 0 {
		parts = append(parts, "the order in which an earlier restore merged pieces of different old subtasks (Flink orders them by random state-handle names)")
	}
	if c&reasonOffsets != 0 {
		parts = append(parts, fmt.Sprintf("the real starting offsets the enumerator resolved (%s), which are part of each split's hash code", offsets))
	}
	if c&reasonSubscriber != 0 {
		parts = append(parts, "the order in which the topic subscriber returned partitions (connector 3.x/4.x)")
	}
	if c&reasonSetTree != 0 {
		parts = append(parts, "a bin of the enumerator's HashSet that became a red-black tree (identity hash order)")
	}
	if c&reasonMapTree != 0 {
		parts = append(parts, "a bin of the reader's HashMap that would or might become a red-black tree (not modelled)")
	}
	if c&reasonMembership != 0 {
		parts = append(parts, "owners left undetermined by an earlier restore")
	}
	if len(parts) == 0 {
		return "an order this model cannot determine"
	}
	return strings.Join(parts, "; and on ")
}
