// Package flinkreplay serves REST responses recorded from a real Flink
// JobManager (collectors/testdata/flink/lifecycle/<version>/, written by the
// e2e suite's recorder) one step of a job's life at a time, so tests can
// drive skewscope's Flink collector through in-place rescales and failovers
// that really happened.
//
// A step holds one collector poll's answers. Metric values are served the
// way Flink serves them: for ?get=, the requested ids that the recorded
// answers of the path carry, in the requested order; unknown ids are left
// out. Paths the step did not record answer 404 with Flink's error body.
//
// It is not a fakejm.Cluster on purpose: a recording is evidence of what a
// real JobManager sent, so it is served as recorded, byte for byte, not
// re-encoded through the fake's wire types (which would make the fake's
// idea of Flink's shapes the thing under test). The fakes are checked
// against these recordings instead (fakejm's and the sandbox's shape
// tests).
package flinkreplay

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
)

// Manifest is a recording's manifest.json.
type Manifest struct {
	FlinkVersion  string `json:"flinkVersion"`
	ConnectorLine string `json:"connectorLine"`
	Steps         []Step `json:"steps"`
}

// Step is one poll's answers at one point of the job's life.
type Step struct {
	Name     string `json:"name"`
	Scenario string `json:"scenario"`
	What     string `json:"what"`
	// Parallelism is the source's parallelism; History the parallelisms
	// from its fresh start.
	Parallelism int   `json:"parallelism"`
	History     []int `json:"history"`
	// Owners are the subtasks the job's own records showed reading each
	// partition (topic → owner per partition).
	Owners map[string][]int `json:"owners"`
	Files  []File           `json:"files"`

	// ByName indexes Files; Bodies holds each file's content.
	ByName map[string]File   `json:"-"`
	Bodies map[string][]byte `json:"-"`
}

// File is one recorded answer.
type File struct {
	Name, File, Method, Path, Query string
	Status                          int
	Vars                            map[string]string
}

// ConcretePath is Path with its {vars} filled in.
func (f File) ConcretePath() string {
	p := f.Path
	for k, v := range f.Vars {
		p = strings.ReplaceAll(p, "{"+k+"}", v)
	}
	return p
}

// Load reads dir/manifest.json and every file it names.
func Load(dir string) (*Manifest, error) {
	b, err := os.ReadFile(filepath.Join(dir, "manifest.json"))
	if err != nil {
		return nil, err
	}
	var m Manifest
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, fmt.Errorf("%s: %w", dir, err)
	}
	if len(m.Steps) == 0 {
		return nil, fmt.Errorf("%s: no steps", dir)
	}
	for i := range m.Steps {
		st := &m.Steps[i]
		st.ByName, st.Bodies = map[string]File{}, map[string][]byte{}
		for _, f := range st.Files {
			st.ByName[f.Name] = f
			body, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(f.File)))
			if err != nil {
				return nil, err
			}
			st.Bodies[f.File] = body
		}
	}
	return &m, nil
}

// SameFile reports whether two steps answered name with the same recording.
func SameFile(a, b *Step, name string) bool {
	fa, oka := a.ByName[name]
	fb, okb := b.ByName[name]
	return oka && okb && fa.File == fb.File
}

// Server serves the current step. Errorf reports a recording it cannot
// read (a test's t.Errorf).
type Server struct {
	Errorf func(format string, args ...any)
	mu     sync.Mutex
	step   *Step
}

// Set makes st the step served.
func (s *Server) Set(st *Step) { s.mu.Lock(); s.step = st; s.mu.Unlock() }

func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	st := s.step
	s.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	var get []string
	if g := r.URL.Query().Get("get"); g != "" {
		get = strings.Split(g, ",")
	}
	union := map[string]json.RawMessage{}
	found := false
	for _, f := range st.Files {
		if f.Method != http.MethodGet || f.Status != http.StatusOK || f.ConcretePath() != r.URL.Path {
			continue
		}
		body := st.Bodies[f.File]
		metric := strings.HasPrefix(f.Query, "get=")
		if len(get) == 0 && !metric {
			// No metric ids asked: the recorded answer of the path, its
			// other query (e.g. maxExceptions=10) left to the recording.
			w.Write(body)
			return
		}
		if len(get) == 0 || !metric {
			continue
		}
		found = true
		var items []struct {
			ID string `json:"id"`
		}
		var raw []json.RawMessage
		if err := json.Unmarshal(body, &items); err != nil || json.Unmarshal(body, &raw) != nil {
			if s.Errorf != nil {
				s.Errorf("%s: not a metric list: %v", f.File, err)
			}
			continue
		}
		for i, it := range items {
			union[it.ID] = raw[i]
		}
	}
	if !found {
		w.WriteHeader(http.StatusNotFound)
		json.NewEncoder(w).Encode(map[string][]string{"errors": {"Not found: " + r.URL.Path}})
		return
	}
	out := []json.RawMessage{}
	for _, id := range get {
		if v, ok := union[id]; ok {
			out = append(out, v)
		}
	}
	json.NewEncoder(w).Encode(out)
}
