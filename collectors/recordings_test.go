package collectors

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"
)

// This file checks the recorded Flink REST responses in
// testdata/flink/<version>/ against the OpenAPI spec of their Flink line
// (testdata/flink-rest/, or $SKEWSCOPE_SHARED_DIR/reference/flink-rest/ when
// that directory exists).
//
// The check follows the 200 response schema of each recorded request and
// compares, recursively: JSON types (object, array, string, integer,
// number, boolean; an integer must be written without a fraction or
// exponent), required properties, enum values, patterns, the int32 range,
// additionalProperties where the spec sets it, allOf, oneOf/anyOf and the
// discriminator mappings. It is stricter than OpenAPI in one respect: a
// property the spec does not declare, on an object whose schema declares
// properties, is reported ("undeclared"), because the point is to list
// every field the wire carries that the spec does not document.
//
// Every difference found must be on knownDifferences below, which says
// where (line, path template, JSON pointer, kind) and why; any other
// difference fails the test, and so does an entry that no recording
// exhibits any more (so the list cannot go stale).

// specLines maps a recorded Flink version to the spec of its line.
var specLines = []struct {
	prefix, line, file string
}{
	{"1.20.", "1.20", "rest_v1_dispatcher-1.20.yml"},
	// The 2.2 branch point spec (testdata/flink-rest/README.md: no REST change
	// between 2.1 and 2.2; it still says v1/2.1-SNAPSHOT).
	{"2.2.", "2.2", "rest_v1_dispatcher-2.2-branchpoint.yml"},
	// No 2.3 branch-point copy is kept; master (2.4-SNAPSHOT) differs from
	// it by /jobs/:jobid/rescales/summary only, which is not recorded.
	{"2.3.", "2.3", "rest_v1_dispatcher.yml"},
}

// knownDiff is one documented difference between a spec and the wire.
type knownDiff struct {
	Lines   []string // Flink lines ("1.20", "2.2") whose recordings show it
	Path    string   // OpenAPI path template
	Pointer string   // JSON pointer into the response; "*" matches one segment (array index or map key)
	Kind    string   // type, undeclared, required, enum, pattern, format, additionalProperties, discriminator, oneOf
	Wire    string   // if set, the difference's detail must be exactly this (e.g. `spec number, wire string "NaN"`)
	Reason  string
	// Wrap, for a "type" difference where the wire is a bare array and the
	// spec an object {Wrap: [...]}: the array is then validated against the
	// schema of that property, so its items are still checked.
	Wrap string
	// Renamed, for an "undeclared" property that is a spec property under
	// another name: the value is then validated against that property.
	Renamed string
}

func (k knownDiff) matches(d difference) bool {
	return k.Kind == d.Kind && pointerMatch(k.Pointer, d.Pointer) && (k.Wire == "" || k.Wire == d.Detail)
}

var both = []string{"1.20", "2.2", "2.3"}

// Reasons shared by several entries of knownDifferences.
const (
	reasonBareMetrics     = "MetricCollectionResponseBody is written as a bare array of {id, value} (custom serializer); the spec says {\"metrics\": [...]}"
	reasonResourceID      = "ResourceID is not hex: a MiniCluster's task executor id is a UUID (standalone: <rpcAddress>:<rpcPort>-<6 hex>, or taskmanager.resource-id); the spec pattern is [0-9a-f]{32}"
	reasonSavepointFormat = "CheckpointStatistics.savepointFormat is null for a checkpoint (set only for savepoints); the spec does not mark it nullable"
)

// knownDifferences lists every place where the recordings differ from the
// spec of their line, with the reason (testdata/flink-rest/README.md says
// where the specs come from).
var knownDifferences = []knownDiff{
	// Metric endpoints: MetricCollectionResponseBody has a custom serializer
	// that writes the list as a bare array.
	{Lines: both, Path: "/jobs/{jobid}/metrics", Pointer: "", Kind: "type", Wrap: "metrics",
		Reason: reasonBareMetrics},
	{Lines: both, Path: "/jobs/{jobid}/vertices/{vertexid}/metrics", Pointer: "", Kind: "type", Wrap: "metrics",
		Reason: reasonBareMetrics},
	{Lines: both, Path: "/jobs/{jobid}/vertices/{vertexid}/subtasks/{subtaskindex}/metrics", Pointer: "", Kind: "type", Wrap: "metrics",
		Reason: reasonBareMetrics},
	{Lines: both, Path: "/jobs/{jobid}/vertices/{vertexid}/watermarks", Pointer: "", Kind: "type", Wrap: "metrics",
		Reason: reasonBareMetrics},
	{Lines: both, Path: "/taskmanagers/{taskmanagerid}/metrics", Pointer: "", Kind: "type", Wrap: "metrics",
		Reason: reasonBareMetrics},
	{Lines: both, Path: "/jobs/{jobid}/vertices/{vertexid}/subtasks/metrics", Pointer: "", Kind: "type",
		Reason: "AggregatedMetricsResponseBody is written as a bare array of {id, min, max, avg, sum, skew} with JSON numbers, only the requested aggregations, [] when any requested id has no value; the spec says an object and gives no item schema"},

	// Ids with custom serializers.
	{Lines: both, Path: "/jobs/{jobid}", Pointer: "/vertices/*/slotSharingGroupId", Kind: "type",
		Reason: "SlotSharingGroupId is written as a 32-hex string (custom serializer); the spec shows the Java object (bytes, lowerPart, upperPart)"},
	{Lines: []string{"2.3"}, Path: "/jobs/{jobid}", Pointer: "/application-id", Kind: "type",
		Reason: "ApplicationID (2.3) is written as a 32-hex string (custom serializer); the spec shows the Java object"},
	{Lines: both, Path: "/taskmanagers", Pointer: "/taskmanagers/*/id", Kind: "pattern",
		Reason: reasonResourceID},
	{Lines: both, Path: "/taskmanagers/{taskmanagerid}", Pointer: "/id", Kind: "pattern",
		Reason: reasonResourceID},

	// Fields on the wire that the spec hides.
	{Lines: both, Path: "/jobs/{jobid}/vertices/{vertexid}", Pointer: "/subtasks/*/start_time", Kind: "undeclared",
		Reason: "SubtaskExecutionAttemptDetailsInfo writes start_time next to start-time (same value, undocumented compatibility field)"},
	{Lines: both, Path: "/jobs/{jobid}/vertices/{vertexid}/backpressure", Pointer: "/backpressure-level", Kind: "undeclared",
		Reason: "JobVertexBackPressureInfo writes backpressure-level next to backpressureLevel (same value, hidden from the spec)"},
	{Lines: both, Path: "/jobs/{jobid}/vertices/{vertexid}/backpressure", Pointer: "/subtasks/*/backpressure-level", Kind: "undeclared",
		Reason: "SubtaskBackPressureInfo writes backpressure-level next to backpressureLevel (same value, hidden from the spec)"},

	// JobConfigInfo has a custom serializer; the spec shows the Java field names.
	{Lines: both, Path: "/jobs/{jobid}/config", Pointer: "/jid", Kind: "undeclared", Renamed: "jobId",
		Reason: "JobConfigInfo is written by a custom serializer as jid; the spec shows the Java field name jobId"},
	{Lines: both, Path: "/jobs/{jobid}/config", Pointer: "/name", Kind: "undeclared", Renamed: "jobName",
		Reason: "JobConfigInfo is written by a custom serializer as name; the spec shows the Java field name jobName"},
	{Lines: both, Path: "/jobs/{jobid}/config", Pointer: "/execution-config", Kind: "undeclared", Renamed: "executionConfigInfo",
		Reason: "JobConfigInfo is written by a custom serializer as execution-config; the spec shows the Java field name executionConfigInfo"},

	// Enum written in another case.
	{Lines: both, Path: "/jobs/{jobid}/checkpoints/config", Pointer: "/mode", Kind: "enum",
		Reason: "CheckpointConfigInfo.ProcessingModeSerializer writes mode.name().toLowerCase() (exactly_once, at_least_once); the spec lists the constants AT_LEAST_ONCE, EXACTLY_ONCE"},

	// Nulls: the spec marks nothing nullable, Jackson writes null fields.
	{Lines: both, Path: "/jobs/{jobid}/checkpoints", Pointer: "/latest/*", Kind: "type", Wire: "spec object, wire null",
		Reason: "LatestCheckpoints writes failed, savepoint and restored as null when there is none yet; the spec does not mark them nullable"},
	{Lines: both, Path: "/jobs/{jobid}/checkpoints", Pointer: "/latest/completed/savepointFormat", Kind: "type", Wire: "spec string, wire null",
		Reason: reasonSavepointFormat},
	{Lines: both, Path: "/jobs/{jobid}/checkpoints", Pointer: "/history/*/savepointFormat", Kind: "type", Wire: "spec string, wire null",
		Reason: reasonSavepointFormat},
	{Lines: both, Path: "/jobs/{jobid}/checkpoints/details/{checkpointid}", Pointer: "/savepointFormat", Kind: "type", Wire: "spec string, wire null",
		Reason: reasonSavepointFormat},

	// Non-finite doubles: Jackson writes NaN as the string "NaN".
	{Lines: both, Path: "/jobs/{jobid}/checkpoints/details/{checkpointid}/subtasks/{vertexid}", Pointer: "/summary/*/*", Kind: "type", Wire: `spec number, wire string "NaN"`,
		Reason: "the per-subtask summary's StatsSummaryDto percentiles (p50 … p999) are NaN there (no histogram behind them; alignment buffered gives 0.0), and Jackson writes a non-finite double as the string \"NaN\"; min, max, avg are numbers"},
	{Lines: both, Path: "/jobs/{jobid}/checkpoints/details/{checkpointid}/subtasks/{vertexid}", Pointer: "/summary/*/*/*", Kind: "type", Wire: `spec number, wire string "NaN"`,
		Reason: "as above, for the nested checkpoint_duration {sync, async} and alignment {processed, persisted, duration} summaries"},
}

// ---------------------------------------------------------------------------
// Spec model.

type schema struct {
	Ref                  string             `yaml:"$ref"`
	Type                 string             `yaml:"type"`
	Format               string             `yaml:"format"`
	Pattern              string             `yaml:"pattern"`
	Enum                 []any              `yaml:"enum"`
	Required             []string           `yaml:"required"`
	Properties           map[string]*schema `yaml:"properties"`
	AdditionalProperties *additional        `yaml:"additionalProperties"`
	Items                *schema            `yaml:"items"`
	AllOf                []*schema          `yaml:"allOf"`
	OneOf                []*schema          `yaml:"oneOf"`
	AnyOf                []*schema          `yaml:"anyOf"`
	Discriminator        *struct {
		PropertyName string            `yaml:"propertyName"`
		Mapping      map[string]string `yaml:"mapping"`
	} `yaml:"discriminator"`
	Description string         `yaml:"description"`
	Other       map[string]any `yaml:",inline"` // keywords the checker does not implement
}

// additional is additionalProperties: a boolean or a schema.
type additional struct {
	allowed bool
	schema  *schema
}

func (a *additional) UnmarshalYAML(n *yaml.Node) error {
	if n.Kind == yaml.ScalarNode {
		return n.Decode(&a.allowed)
	}
	a.allowed = true
	a.schema = &schema{}
	return n.Decode(a.schema)
}

type operation struct {
	Responses map[string]struct {
		Content map[string]struct {
			Schema *schema `yaml:"schema"`
		} `yaml:"content"`
	} `yaml:"responses"`
}

type openAPI struct {
	file string
	Info struct {
		Version string `yaml:"version"`
	} `yaml:"info"`
	Paths      map[string]map[string]yaml.Node `yaml:"paths"`
	Components struct {
		Schemas map[string]*schema `yaml:"schemas"`
	} `yaml:"components"`
}

// ignorable keywords carry no constraint.
var ignorable = map[string]bool{"title": true, "example": true, "deprecated": true}

func loadSpec(t *testing.T, path string) *openAPI {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("read spec: %v", err)
	}
	sp := &openAPI{file: filepath.Base(path)}
	if err := yaml.Unmarshal(b, sp); err != nil {
		t.Fatalf("parse %s: %v", path, err)
	}
	if len(sp.Paths) == 0 || len(sp.Components.Schemas) == 0 {
		t.Fatalf("%s: no paths or no components/schemas", path)
	}
	// Refuse keywords the checker would silently ignore.
	var unsupported []string
	var walk func(where string, s *schema)
	walk = func(where string, s *schema) {
		if s == nil {
			return
		}
		for k := range s.Other {
			if !ignorable[k] {
				unsupported = append(unsupported, where+": "+k)
			}
		}
		if s.Ref != "" {
			if _, err := sp.resolve(s); err != nil {
				unsupported = append(unsupported, where+": "+err.Error())
			}
		}
		for k, p := range s.Properties {
			walk(where+"/"+k, p)
		}
		if s.AdditionalProperties != nil {
			walk(where+"/additionalProperties", s.AdditionalProperties.schema)
		}
		walk(where+"/items", s.Items)
		for i, l := range [][]*schema{s.AllOf, s.OneOf, s.AnyOf} {
			for j, x := range l {
				walk(fmt.Sprintf("%s/%s/%d", where, []string{"allOf", "oneOf", "anyOf"}[i], j), x)
			}
		}
		switch s.Type {
		case "", "object", "array", "string", "integer", "number", "boolean":
		default:
			unsupported = append(unsupported, where+": type "+s.Type)
		}
	}
	for name, s := range sp.Components.Schemas {
		walk(name, s)
	}
	slices.Sort(unsupported)
	if len(unsupported) > 0 {
		t.Fatalf("%s uses schema keywords the checker does not implement (extend it): %s", path, strings.Join(unsupported, "; "))
	}
	return sp
}

// resolve follows $ref to components/schemas.
func (sp *openAPI) resolve(s *schema) (*schema, error) {
	for hops := 0; s != nil && s.Ref != ""; hops++ {
		name, ok := strings.CutPrefix(s.Ref, "#/components/schemas/")
		if !ok || hops > 32 {
			return nil, fmt.Errorf("unsupported $ref %q", s.Ref)
		}
		next, ok := sp.Components.Schemas[name]
		if !ok {
			return nil, fmt.Errorf("$ref %q names no schema", s.Ref)
		}
		s = next
	}
	return s, nil
}

// response200 is the application/json schema of GET path's 200 response.
func (sp *openAPI) response200(method, path string) (*schema, error) {
	item, ok := sp.Paths[path]
	if !ok {
		return nil, fmt.Errorf("%s has no path %s", sp.file, path)
	}
	node, ok := item[strings.ToLower(method)]
	if !ok {
		return nil, fmt.Errorf("%s has no %s %s", sp.file, method, path)
	}
	var op operation
	if err := node.Decode(&op); err != nil {
		return nil, fmt.Errorf("%s %s %s: %v", sp.file, method, path, err)
	}
	r, ok := op.Responses["200"]
	if !ok {
		return nil, fmt.Errorf("%s %s %s: no 200 response", sp.file, method, path)
	}
	c, ok := r.Content["application/json"]
	if !ok || c.Schema == nil {
		return nil, fmt.Errorf("%s %s %s: 200 response has no application/json schema", sp.file, method, path)
	}
	return c.Schema, nil
}

// ---------------------------------------------------------------------------
// Validation.

type difference struct {
	Pointer, Kind, Detail string
}

type validator struct {
	sp      *openAPI
	known   []knownDiff // entries for this line and path: their Wrap and Renamed steer the walk
	diffs   []difference
	seen    map[difference]bool
	problem []string // spec problems (bad $ref, bad pattern)
	res     map[string]*regexp.Regexp
}

func newValidator(sp *openAPI, known []knownDiff) *validator {
	return &validator{sp: sp, known: known, seen: map[difference]bool{}, res: map[string]*regexp.Regexp{}}
}

// add records a difference and returns the known entry that covers it, if any.
func (v *validator) add(ptr, kind, detail string) *knownDiff {
	d := difference{ptr, kind, detail}
	if !v.seen[d] {
		v.seen[d] = true
		v.diffs = append(v.diffs, d)
	}
	for i := range v.known {
		if v.known[i].matches(d) {
			return &v.known[i]
		}
	}
	return nil
}

func (v *validator) resolve(s *schema) *schema {
	r, err := v.sp.resolve(s)
	if err != nil {
		v.problem = append(v.problem, err.Error())
	}
	return r
}

// applicable is s resolved, with its allOf members and, where a
// discriminator maps the value's tag to a schema, that schema, each once.
func (v *validator) applicable(s *schema, val any, ptr string, seen map[*schema]bool) []*schema {
	s = v.resolve(s)
	if s == nil || seen[s] {
		return nil
	}
	seen[s] = true
	out := []*schema{s}
	for _, a := range s.AllOf {
		out = append(out, v.applicable(a, val, ptr, seen)...)
	}
	if d := s.Discriminator; d != nil {
		if obj, ok := val.(map[string]any); ok {
			tag, present := obj[d.PropertyName].(string)
			if target, ok := d.Mapping[tag]; ok {
				out = append(out, v.applicable(&schema{Ref: target}, val, ptr, seen)...)
			} else if present {
				// (absent: "required" reports it)
				v.add(ptr+"/"+escapePointer(d.PropertyName), "discriminator", fmt.Sprintf("%q is not in the mapping (%s)", tag, strings.Join(slices.Sorted(maps.Keys(d.Mapping)), ", ")))
			}
		}
	}
	return out
}

func (v *validator) validate(s *schema, val any, ptr string) {
	all := v.applicable(s, val, ptr, map[*schema]bool{})
	for _, a := range all {
		if a.Type != "" && !typeOK(a.Type, val) {
			k := v.add(ptr, "type", fmt.Sprintf("spec %s, wire %s", a.Type, describe(val)))
			if k != nil && k.Wrap != "" {
				// A bare array where the spec has {Wrap: [...]}: check it as that property.
				for _, b := range all {
					if p := b.Properties[k.Wrap]; p != nil {
						v.validate(p, val, ptr)
						return
					}
				}
				v.problem = append(v.problem, fmt.Sprintf("known difference at %q wraps the value as %q, which the schema does not declare", ptr, k.Wrap))
			}
			return
		}
	}
	for _, a := range all {
		if len(a.Enum) > 0 && !inEnum(a.Enum, val) {
			v.add(ptr, "enum", fmt.Sprintf("%s not in %v", describe(val), a.Enum))
		}
		if str, ok := val.(string); ok && a.Pattern != "" {
			re, ok := v.res[a.Pattern]
			if !ok {
				var err error
				if re, err = regexp.Compile(a.Pattern); err != nil {
					v.problem = append(v.problem, fmt.Sprintf("pattern %q: %v", a.Pattern, err))
				}
				v.res[a.Pattern] = re
			}
			if re != nil && !re.MatchString(str) {
				v.add(ptr, "pattern", fmt.Sprintf("%q does not match %s", str, a.Pattern))
			}
		}
		if n, ok := val.(json.Number); ok && a.Format == "int32" {
			if i, err := n.Int64(); err == nil && (i < math.MinInt32 || i > math.MaxInt32) {
				v.add(ptr, "format", fmt.Sprintf("%s is out of int32 range", n))
			}
		}
		for i, alts := range [][]*schema{a.OneOf, a.AnyOf} {
			if len(alts) == 0 {
				continue
			}
			matched := 0
			for _, alt := range alts {
				sub := newValidator(v.sp, v.known)
				sub.validate(alt, val, ptr)
				if len(sub.diffs) == 0 {
					matched++
				}
			}
			kw := []string{"oneOf", "anyOf"}[i]
			if matched == 0 || (kw == "oneOf" && matched > 1) {
				v.add(ptr, kw, fmt.Sprintf("value matches %d of %d alternatives", matched, len(alts)))
			}
		}
	}
	switch x := val.(type) {
	case map[string]any:
		declared := map[string][]*schema{}
		var required []string
		var addl *additional
		hasProps := false
		for _, a := range all {
			for k, p := range a.Properties {
				declared[k] = append(declared[k], p)
			}
			hasProps = hasProps || len(a.Properties) > 0
			required = append(required, a.Required...)
			if addl == nil {
				addl = a.AdditionalProperties
			}
		}
		for _, r := range required {
			if _, ok := x[r]; !ok {
				v.add(ptr+"/"+escapePointer(r), "required", "required property missing")
			}
		}
		for _, key := range slices.Sorted(maps.Keys(x)) {
			p := ptr + "/" + escapePointer(key)
			switch {
			case len(declared[key]) > 0:
				for _, ps := range declared[key] {
					v.validate(ps, x[key], p)
				}
			case addl != nil && addl.schema != nil:
				v.validate(addl.schema, x[key], p)
			case addl != nil && !addl.allowed:
				v.add(p, "additionalProperties", "the spec sets additionalProperties: false")
			case addl != nil:
				// additionalProperties: true
			case hasProps:
				k := v.add(p, "undeclared", "property not in the spec")
				if k != nil && k.Renamed != "" {
					if len(declared[k.Renamed]) == 0 {
						v.problem = append(v.problem, fmt.Sprintf("known difference at %q renames the spec property %q, which the schema does not declare", p, k.Renamed))
					}
					for _, ps := range declared[k.Renamed] {
						v.validate(ps, x[key], p)
					}
				}
			}
		}
	case []any:
		for _, a := range all {
			if a.Items == nil {
				continue
			}
			for i, e := range x {
				v.validate(a.Items, e, ptr+"/"+strconv.Itoa(i))
			}
		}
	}
}

func typeOK(typ string, val any) bool {
	switch typ {
	case "object":
		_, ok := val.(map[string]any)
		return ok
	case "array":
		_, ok := val.([]any)
		return ok
	case "string":
		_, ok := val.(string)
		return ok
	case "boolean":
		_, ok := val.(bool)
		return ok
	case "number":
		_, ok := val.(json.Number)
		return ok
	case "integer":
		n, ok := val.(json.Number)
		if !ok || strings.ContainsAny(n.String(), ".eE") {
			return false
		}
		_, err := n.Int64()
		return err == nil
	}
	return false
}

func describe(val any) string {
	switch x := val.(type) {
	case map[string]any:
		return "object"
	case []any:
		return fmt.Sprintf("array (%d items)", len(x))
	case string:
		if len(x) > 60 {
			x = x[:60] + "…"
		}
		return fmt.Sprintf("string %q", x)
	case json.Number:
		return "number " + x.String()
	case bool:
		return fmt.Sprintf("boolean %v", x)
	case nil:
		return "null"
	}
	return fmt.Sprintf("%T", val)
}

func inEnum(enum []any, val any) bool {
	for _, e := range enum {
		if fmt.Sprint(e) == fmt.Sprint(val) {
			return true
		}
	}
	return false
}

func escapePointer(s string) string {
	return strings.ReplaceAll(strings.ReplaceAll(s, "~", "~0"), "/", "~1")
}

// pointerMatch matches a JSON pointer against a pattern in which "*"
// stands for one segment.
func pointerMatch(pattern, ptr string) bool {
	ps, xs := strings.Split(pattern, "/"), strings.Split(ptr, "/")
	if len(ps) != len(xs) {
		return false
	}
	for i := range ps {
		if ps[i] != "*" && ps[i] != xs[i] {
			return false
		}
	}
	return true
}

// ---------------------------------------------------------------------------
// The test.

type manifestEntry struct {
	Method string            `json:"method"`
	Path   string            `json:"path"`
	Status int               `json:"status"`
	Vars   map[string]string `json:"vars"`
}

type manifest struct {
	FlinkVersion string                   `json:"flinkVersion"`
	Line         string                   `json:"line"`
	Recordings   map[string]manifestEntry `json:"recordings"`
}

// specDir is testdata/flink-rest, the specs kept in the repository, unless
// $SKEWSCOPE_SHARED_DIR names a directory with reference/flink-rest in it:
// then that one, so a newer set of specs can be tried without copying it in.
func specDir(t *testing.T) string {
	t.Helper()
	if shared := os.Getenv("SKEWSCOPE_SHARED_DIR"); shared != "" {
		dir := filepath.Join(shared, "reference", "flink-rest")
		if st, err := os.Stat(dir); err == nil && st.IsDir() {
			t.Logf("OpenAPI specs from %s ($SKEWSCOPE_SHARED_DIR)", dir)
			return dir
		}
		t.Logf("no %s ($SKEWSCOPE_SHARED_DIR): using testdata/flink-rest", dir)
	}
	dir := filepath.Join("testdata", "flink-rest")
	if st, err := os.Stat(dir); err != nil || !st.IsDir() {
		t.Fatalf("Flink OpenAPI specs not found at %s: %v", dir, err)
	}
	return dir
}

func decodeJSON(b []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, fmt.Errorf("trailing data after the JSON value")
	}
	return v, nil
}

// found is one known difference seen in one recording.
type found struct {
	version, name string
	d             difference
}

func TestRecordingsMatchOpenAPI(t *testing.T) {
	specsAt := specDir(t)
	root := filepath.Join("testdata", "flink")
	entries, err := os.ReadDir(root)
	if err != nil {
		t.Fatalf("recordings: %v", err)
	}
	var versions []string
	for _, e := range entries {
		// lifecycle/ holds the recordings of a job's life under one job id
		// (collectors/flink's TestRecordedLifecycle replays them), eventtime/
		// those of the event-time jobs and sql/ those of the SQL jobs, per
		// version and variant.
		if e.IsDir() && e.Name() != "lifecycle" && e.Name() != "eventtime" && e.Name() != "sql" {
			versions = append(versions, e.Name())
		}
	}
	slices.Sort(versions)

	specs := map[string]*openAPI{}
	linesSeen := map[string]bool{}
	used := make([][]found, len(knownDifferences))
	var summary strings.Builder
	for _, version := range versions {
		var line, file string
		for _, l := range specLines {
			if strings.HasPrefix(version, l.prefix) {
				line, file = l.line, l.file
			}
		}
		if line == "" {
			t.Errorf("testdata/flink/%s: no spec mapped to this version; add it to specLines", version)
			continue
		}
		linesSeen[line] = true
		sp := specs[file]
		if sp == nil {
			sp = loadSpec(t, filepath.Join(specsAt, file))
			specs[file] = sp
		}
		dir := filepath.Join(root, version)
		mb, err := os.ReadFile(filepath.Join(dir, "manifest.json"))
		if err != nil {
			t.Errorf("%s: %v", version, err)
			continue
		}
		var m manifest
		if err := json.Unmarshal(mb, &m); err != nil {
			t.Errorf("%s/manifest.json: %v", version, err)
			continue
		}
		if m.FlinkVersion != version || m.Line != line {
			t.Errorf("%s/manifest.json says Flink %s line %s; the directory and spec mapping say %s line %s", version, m.FlinkVersion, m.Line, version, line)
		}
		files, _ := filepath.Glob(filepath.Join(dir, "*.json"))
		for _, f := range files {
			name := strings.TrimSuffix(filepath.Base(f), ".json")
			if _, ok := m.Recordings[name]; !ok && name != "manifest" {
				t.Errorf("%s/%s.json is not in the manifest", version, name)
			}
		}
		fmt.Fprintf(&summary, "\nFlink %s — spec %s (info.version %s): %d endpoints recorded\n", version, file, sp.Info.Version, len(m.Recordings))
		for _, name := range slices.Sorted(maps.Keys(m.Recordings)) {
			e := m.Recordings[name]
			path, _, _ := strings.Cut(e.Path, "?")
			var unexpected []difference
			nKnown := 0
			check := func() string {
				if e.Status != 200 {
					return fmt.Sprintf("recorded status %d; only 200 responses are recorded", e.Status)
				}
				s, err := sp.response200(e.Method, path)
				if err != nil {
					return err.Error()
				}
				b, err := os.ReadFile(filepath.Join(dir, name+".json"))
				if err != nil {
					return err.Error()
				}
				body, err := decodeJSON(b)
				if err != nil {
					return fmt.Sprintf("%s.json: %v", name, err)
				}
				var known []knownDiff
				var knownIdx []int
				for j, kd := range knownDifferences {
					if slices.Contains(kd.Lines, line) && kd.Path == path {
						known = append(known, kd)
						knownIdx = append(knownIdx, j)
					}
				}
				v := newValidator(sp, known)
				v.validate(s, body, "")
				for _, d := range v.diffs {
					k := -1
					for j, kd := range known {
						if kd.matches(d) {
							k = knownIdx[j]
							break
						}
					}
					if k < 0 {
						unexpected = append(unexpected, d)
						continue
					}
					nKnown++
					used[k] = append(used[k], found{version, name, d})
				}
				if len(v.problem) > 0 {
					return "spec problems: " + strings.Join(v.problem, "; ")
				}
				return ""
			}
			schemaName := "?"
			if s, err := sp.response200(e.Method, path); err == nil {
				schemaName = strings.TrimPrefix(s.Ref, "#/components/schemas/")
			}
			if msg := check(); msg != "" {
				t.Errorf("%s %s (%s %s): %s", version, name, e.Method, e.Path, msg)
			}
			for _, d := range unexpected {
				t.Errorf("%s %s: %s %s: difference not on knownDifferences: [%s] at %q: %s", version, name, e.Method, path, d.Kind, d.Pointer, d.Detail)
			}
			status := "matches the spec"
			if nKnown > 0 {
				status = fmt.Sprintf("%d known differences", nKnown)
			}
			if len(unexpected) > 0 {
				status += fmt.Sprintf(", %d UNEXPECTED", len(unexpected))
			}
			shown := e.Path
			if len(shown) > 110 {
				shown = shown[:110] + "…"
			}
			fmt.Fprintf(&summary, "  %-46s %s %s → %s: %s\n", name, e.Method, shown, schemaName, status)
		}
	}
	for _, l := range specLines {
		if !linesSeen[l.line] {
			t.Errorf("no recordings for Flink line %s in testdata/flink/; record them (SKEWSCOPE_RECORD=1 go test -tags e2e -run TestRecordRESTResponses ./e2e/)", l.line)
		}
	}

	summary.WriteString("\nKnown spec-vs-wire differences found:\n")
	for k, kd := range knownDifferences {
		byLine := map[string][]found{}
		for _, f := range used[k] {
			byLine[lineOf(f.version)] = append(byLine[lineOf(f.version)], f)
		}
		for _, l := range kd.Lines {
			if len(byLine[l]) == 0 && linesSeen[l] {
				t.Errorf("knownDifferences entry [%s] %s %q (line %s) matches no recording any more; remove it or narrow its lines", kd.Kind, kd.Path, kd.Pointer, l)
			}
		}
		names := map[string]bool{}
		ptrs := map[string]bool{}
		for _, f := range used[k] {
			names[f.version+"/"+f.name] = true
			ptrs[f.d.Pointer] = true
		}
		example := ""
		if len(used[k]) > 0 {
			example = used[k][0].d.Detail
		}
		fmt.Fprintf(&summary, "  [%s] GET %s at %q (lines %s): %d occurrences in %s\n      e.g. %s\n      reason: %s\n",
			kd.Kind, kd.Path, kd.Pointer, strings.Join(kd.Lines, ", "), len(used[k]), strings.Join(slices.Sorted(maps.Keys(names)), ", "), example, kd.Reason)
	}
	t.Log(summary.String())
}

func lineOf(version string) string {
	for _, l := range specLines {
		if strings.HasPrefix(version, l.prefix) {
			return l.line
		}
	}
	return ""
}

// TestSpecCheckerFindsDifferences makes sure the checker is not vacuous:
// crafted bodies that break the real spec in each way it checks must be
// reported, and a conforming body must not.
func TestSpecCheckerFindsDifferences(t *testing.T) {
	sp := loadSpec(t, filepath.Join(specDir(t), "rest_v1_dispatcher-1.20.yml"))
	cases := []struct {
		schema, body string
		want         []difference // Pointer and Kind; Detail ignored
	}{
		{"ClusterOverviewWithVersion", `{"taskmanagers": 1, "slots-total": 16, "flink-version": "1.20.5"}`, nil},
		{"ClusterOverviewWithVersion", `{"taskmanagers": "1"}`, []difference{{Pointer: "/taskmanagers", Kind: "type"}}},
		{"ClusterOverviewWithVersion", `{"taskmanagers": 1.0}`, []difference{{Pointer: "/taskmanagers", Kind: "type"}}},
		{"ClusterOverviewWithVersion", `{"taskmanagers": 3000000000}`, []difference{{Pointer: "/taskmanagers", Kind: "format"}}},
		{"ClusterOverviewWithVersion", `{"taskmanager": 1}`, []difference{{Pointer: "/taskmanager", Kind: "undeclared"}}},
		{"ClusterOverviewWithVersion", `[]`, []difference{{Pointer: "", Kind: "type"}}},
		{"JobDetailsInfo", `{"state": "RUNNIN"}`, []difference{{Pointer: "/state", Kind: "enum"}}},
		{"JobDetailsInfo", `{"jid": "not-hex"}`, []difference{{Pointer: "/jid", Kind: "pattern"}}},
		{"JobDetailsInfo", `{"timestamps": {"RUNNING": "x"}}`, []difference{{Pointer: "/timestamps/RUNNING", Kind: "type"}}},
		{"JobDetailsInfo", `{"vertices": [{"id": "0123456789abcdef0123456789abcdef", "tasks": {"RUNNING": 1}, "bogus": true}]}`,
			[]difference{{Pointer: "/vertices/0/bogus", Kind: "undeclared"}}},
		{"CheckpointStatistics", `{"className": "completed", "id": 1, "discarded": false, "external_path": "x"}`, nil},
		{"CheckpointStatistics", `{"className": "completed", "discarded": "no"}`, []difference{{Pointer: "/discarded", Kind: "type"}}},
		{"CheckpointStatistics", `{"className": "weird"}`, []difference{{Pointer: "/className", Kind: "discriminator"}}},
		{"CheckpointStatistics", `{"id": 1}`, []difference{{Pointer: "/className", Kind: "required"}}},
		{"CheckpointStatistics", `{"className": "completed", "status": "DONE"}`, []difference{{Pointer: "/status", Kind: "enum"}}},
	}
	for _, c := range cases {
		body, err := decodeJSON([]byte(c.body))
		if err != nil {
			t.Fatal(err)
		}
		v := newValidator(sp, nil)
		v.validate(&schema{Ref: "#/components/schemas/" + c.schema}, body, "")
		var got []difference
		for _, d := range v.diffs {
			got = append(got, difference{Pointer: d.Pointer, Kind: d.Kind})
		}
		if fmt.Sprint(got) != fmt.Sprint(c.want) || len(v.problem) > 0 {
			t.Errorf("%s %s: got %v (problems %v), want %v", c.schema, c.body, v.diffs, v.problem, c.want)
		}
	}
	// A known difference with Wrap still checks the items of a bare array.
	v := newValidator(sp, []knownDiff{{Pointer: "", Kind: "type", Wrap: "metrics"}})
	body, _ := decodeJSON([]byte(`[{"id": "a", "value": "1"}, {"value": 2}]`))
	v.validate(&schema{Ref: "#/components/schemas/MetricCollectionResponseBody"}, body, "")
	want := "[{ type spec object, wire array (2 items)} {/1/id required required property missing} {/1/value type spec string, wire number 2}]"
	if fmt.Sprint(v.diffs) != want {
		t.Errorf("wrapped metric array: got %v, want %s", v.diffs, want)
	}
}
