package live

// inferredHistory is a parallelism history inferred from a source's
// observed layout.
type inferredHistory struct {
	history []int
}
