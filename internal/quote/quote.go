// Package quote quotes user input for messages.
package quote

import (
	"strconv"
	"unicode/utf8"
)

// maxLen is how many bytes of the input a message shows.
const maxLen = 64

// Clip quotes s for an error message, shortened on a rune boundary so that a
// 10 MB paste does not become a 10 MB error. Every package that echoes input
// in a message uses it.
func Clip(s string) string {
	if len(s) <= maxLen {
		return strconv.Quote(s)
	}
	cut := maxLen
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return strconv.Quote(s[:cut]) + "…"
}
