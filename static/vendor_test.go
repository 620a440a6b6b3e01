package static

import (
	"crypto/sha256"
	"encoding/hex"
	"io/fs"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// vendorRow matches a file row of vendor/VERSIONS.md:
// | `uplot/uPlot.esm.js` | `package/dist/uPlot.esm.js` | `<sha256>` |
var vendorRow = regexp.MustCompile("^\\| `([^`]+)` \\| `[^`]+` \\| `([0-9a-f]{64})` \\|$")

// TestVendoredFilesMatchVersions checks the embedded vendor files against
// the sha256 recorded in vendor/VERSIONS.md, both ways: every listed file
// is embedded with that hash, and every embedded vendor file is listed.
func TestVendoredFilesMatchVersions(t *testing.T) {
	versions, err := files.ReadFile("vendor/VERSIONS.md")
	if err != nil {
		t.Fatal(err)
	}
	listed := map[string]string{}
	for line := range strings.Lines(string(versions)) {
		m := vendorRow.FindStringSubmatch(strings.TrimSpace(line))
		if m == nil {
			continue
		}
		if _, dup := listed[m[1]]; dup {
			t.Errorf("VERSIONS.md lists %s twice", m[1])
		}
		listed[m[1]] = m[2]
	}
	for _, want := range []string{"uplot/uPlot.esm.js", "uplot/uPlot.min.css", "uplot/LICENSE"} {
		if _, ok := listed[want]; !ok {
			t.Errorf("VERSIONS.md does not list %s", want)
		}
	}

	var embedded []string
	err = fs.WalkDir(files, "vendor", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || p == "vendor/VERSIONS.md" {
			return err
		}
		name := strings.TrimPrefix(p, "vendor/")
		embedded = append(embedded, name)
		b, err := files.ReadFile(p)
		if err != nil {
			return err
		}
		sum := sha256.Sum256(b)
		want, ok := listed[name]
		switch {
		case !ok:
			t.Errorf("vendor/%s is embedded but not listed in VERSIONS.md", name)
		case hex.EncodeToString(sum[:]) != want:
			t.Errorf("sha256(vendor/%s) = %x, want %s (VERSIONS.md)", name, sum, want)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for name := range listed {
		if !slices.Contains(embedded, name) {
			t.Errorf("VERSIONS.md lists %s, which is not embedded", name)
		}
	}
}

// TestVendoredAssetsServed checks that Load indexes the vendored files
// under hashed names with the right content types, so pages can link them.
func TestVendoredAssetsServed(t *testing.T) {
	a, err := Load()
	if err != nil {
		t.Fatal(err)
	}
	for name, ct := range map[string]string{
		"vendor/uplot/uPlot.esm.js":  "text/javascript; charset=utf-8",
		"vendor/uplot/uPlot.min.css": "text/css; charset=utf-8",
	} {
		hashed := a.Hashed(name)
		as, immutable, ok := a.Lookup(hashed)
		if !ok || !immutable {
			t.Errorf("Lookup(%q): ok %v, immutable %v; want both", hashed, ok, immutable)
			continue
		}
		if as.Name != name || as.ContentType != ct {
			t.Errorf("Lookup(%q) = %s (%s), want %s (%s)", hashed, as.Name, as.ContentType, name, ct)
		}
	}
}
