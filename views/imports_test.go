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
// packages (not live, not the collectors) and nothing that does I/O.
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
			for _, p := range forbidden {
				if path == p || strings.HasPrefix(path, strings.TrimSuffix(p, "/")+"/") && (strings.HasSuffix(p, "/") || path != "net/url") {
					t.Errorf("%s imports %s", f, path)
				}
			}
		}
	}
}
