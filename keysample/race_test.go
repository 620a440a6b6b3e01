//go:build race

package keysample

// raceEnabled: under the race detector sync.Pool drops items on purpose,
// so allocation counts of pooled paths say nothing.
const raceEnabled = true
