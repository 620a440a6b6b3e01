// Package static holds skewscope's CSS, JavaScript modules and vendored
// libraries, embedded in the binary. Each file is served under a name that
// carries a hash of its content (app.css → app.3f2a9c1e.css), so browsers
// may cache it forever and a new build is never served stale.
package static

import (
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"fmt"
	"io/fs"
	"path"
	"strings"
)

//go:embed css/*.css js/*.js img/*.svg vendor
var files embed.FS

// Asset is one embedded file.
type Asset struct {
	Name        string // e.g. "css/app.css"
	HashedName  string // e.g. "css/app.3f2a9c1e.css"
	ContentType string
	Body        []byte
}

// Assets indexes the embedded files by plain and hashed name.
type Assets struct {
	byName   map[string]*Asset
	byHashed map[string]*Asset
}

// Load reads every embedded file and computes its hashed name.
func Load() (*Assets, error) {
	a := &Assets{byName: map[string]*Asset{}, byHashed: map[string]*Asset{}}
	err := fs.WalkDir(files, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := files.ReadFile(p)
		if err != nil {
			return err
		}
		sum := sha256.Sum256(b)
		ext := path.Ext(p)
		as := &Asset{
			Name:        p,
			HashedName:  strings.TrimSuffix(p, ext) + "." + hex.EncodeToString(sum[:4]) + ext,
			ContentType: contentType(ext),
			Body:        b,
		}
		a.byName[p] = as
		a.byHashed[as.HashedName] = as
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("static assets: %w", err)
	}
	return a, nil
}

// Hashed returns the hashed name of the asset called name. It panics on an
// unknown name: asset names are constants in templates, and a typo must fail
// the first test that renders the page.
func (a *Assets) Hashed(name string) string {
	as, ok := a.byName[name]
	if !ok {
		panic("static: no asset " + name)
	}
	return as.HashedName
}

// Lookup finds an asset by its hashed name (immutable is true) or by its
// plain name, which ES module imports use (immutable is false: the response
// must be revalidated).
func (a *Assets) Lookup(name string) (as *Asset, immutable bool, ok bool) {
	if as, ok := a.byHashed[name]; ok {
		return as, true, true
	}
	as, ok = a.byName[name]
	return as, false, ok
}

// ETag is a strong validator for the asset's content.
func (as *Asset) ETag() string {
	return `"` + strings.TrimSuffix(strings.TrimPrefix(as.HashedName, strings.TrimSuffix(as.Name, path.Ext(as.Name))+"."), path.Ext(as.Name)) + `"`
}

func contentType(ext string) string {
	switch ext {
	case ".css":
		return "text/css; charset=utf-8"
	case ".js", ".mjs":
		return "text/javascript; charset=utf-8"
	case ".svg":
		return "image/svg+xml"
	case ".png":
		return "image/png"
	case ".txt", ".md":
		return "text/plain; charset=utf-8"
	case ".json":
		return "application/json"
	}
	return "application/octet-stream"
}
