package views

import (
	"go/parser"
	"go/token"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// views lays out models that builders made: it imports none of skewscope's
// packages (not live, not the collectors) and nothing that does I/O. The
// one exception is internal/bidi, the Unicode bidi character rules
// (standard library only) that Isolate shares with the store's sanitising.
func TestViewsImportNoDataOrIO(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	forbidden := []string{"github.com/skewscope/", "github.com/twmb/", "net", "os", "io/fs", "database/"}
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		af, err := parser.ParseFile(token.NewFileSet(), f, nil, parser.ImportsOnly)
		if err != nil {
			t.Fatal(err)
		}
		for _, im := range af.Imports {
			path, _ := strconv.Unquote(im.Path.Value)
			if path == "github.com/skewscope/skewscope/internal/bidi" {
				continue
			}
			for _, p := range forbidden {
				if path == p || strings.HasPrefix(path, strings.TrimSuffix(p, "/")+"/") && (strings.HasSuffix(p, "/") || path != "net/url") {
					t.Errorf("%s imports %s", f, path)
				}
			}
		}
	}
}
