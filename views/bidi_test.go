package views

import "testing"

func TestIsolate(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"orders", "orders"},
		{"", ""},
		{"orders\u202Egnp.exe", "\u2068orders\u202Egnp.exe\u2069"},
		{"طلبات", "\u2068طلبات\u2069"},
		{"a\u061Cb", "\u2068a\u061Cb\u2069"}, // ALM, a control too
		{"a\u2067b", "\u2068a\u2067b\u2069"},
	} {
		if got := Isolate(c.in); got != c.want {
			t.Errorf("Isolate(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}
