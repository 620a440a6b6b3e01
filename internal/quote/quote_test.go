package quote

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestClip(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"", `""`},
		{"orders", `"orders"`},
		{"a\"b\n", `"a\"b\n"`},
		{strings.Repeat("x", 64), `"` + strings.Repeat("x", 64) + `"`},
		{strings.Repeat("x", 65), `"` + strings.Repeat("x", 64) + `"…`},
		// 63 ASCII bytes then a 3-byte rune across the cut: the rune is dropped whole.
		{strings.Repeat("x", 63) + "€€", `"` + strings.Repeat("x", 63) + `"…`},
	} {
		if got := Clip(tc.in); got != tc.want {
			t.Errorf("Clip(%.20q…) = %s, want %s", tc.in, got, tc.want)
		}
	}
	big := strings.Repeat("ü", 5<<20)
	if got := Clip(big); len(got) > 80 || !utf8.ValidString(got) {
		t.Errorf("Clip of 10 MB = %d bytes (valid UTF-8 %t)", len(got), utf8.ValidString(got))
	}
}
