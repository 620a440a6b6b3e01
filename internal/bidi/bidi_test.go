package bidi

import (
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestEscape(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"orders", "orders"},
		{"", ""},
		{"orders\u202Egnp.exe", "orders[U+202E]gnp.exe"},
		{"\u202A\u202B\u202C\u202D\u202E", "[U+202A][U+202B][U+202C][U+202D][U+202E]"},
		{"a\u2066b\u2067c\u2068d\u2069", "a[U+2066]b[U+2067]c[U+2068]d[U+2069]"},
		{"\u200E\u200F\u061C", "[U+200E][U+200F][U+061C]"},
		{"طلبات", "طلبات"}, // right-to-left letters are text, not controls
	} {
		if got := Escape(c.in); got != c.want {
			t.Errorf("Escape(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

func TestEscapeError(t *testing.T) {
	if EscapeError(nil) != nil {
		t.Errorf("EscapeError(nil) != nil")
	}
	if err := EscapeError(io.EOF); err != io.EOF {
		t.Errorf("EscapeError(io.EOF) = %v, want io.EOF itself", err)
	}
	base := errors.Join(io.ErrUnexpectedEOF, errors.New("job \u202Eabc"))
	err := EscapeError(base)
	if got, want := err.Error(), io.ErrUnexpectedEOF.Error()+"\njob [U+202E]abc"; got != want {
		t.Errorf("EscapeError(...).Error() = %q, want %q", got, want)
	}
	if !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Errorf("EscapeError lost the wrapped error")
	}
}

// TestOneCopy: the bidi character ranges live here only; every package
// that isolates or escapes text calls this package (views.Isolate, the live
// store's sanitising), so no copy can fall behind (one once missed U+061C).
func TestOneCopy(t *testing.T) {
	root := filepath.Join("..", "..")
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == "bidi" || strings.HasPrefix(d.Name(), ".") || d.Name() == "node_modules") && path != root {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		src := strings.ToLower(string(b))
		for _, copyOf := range []string{"0x202a", "0x2066", "0x061c", "0x200e"} {
			if strings.Contains(src, copyOf) {
				t.Errorf("%s holds %s: a copy of the bidi ranges; use package bidi or views.Isolate", path, copyOf)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
