//go:build !race

package keysample

const raceEnabled = false
