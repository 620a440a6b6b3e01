//go:build e2e

package e2e

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"regexp"
	"sort"
	"strings"
)

// jnode is a JSON value that keeps the wire's key order and number
// literals, so a recording can be re-indented and scrubbed without
// changing its structure.
type jnode struct {
	kind  byte // 'o' object, 'a' array, 's' string, 'n' number, 'b' bool, 'z' null
	keys  []string
	vals  []*jnode // object values, parallel to keys
	elems []*jnode // array elements
	str   string
	num   json.Number
	b     bool
}

func parseJSON(b []byte) (*jnode, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	n, err := parseNode(dec)
	if err != nil {
		return nil, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, fmt.Errorf("trailing data after the JSON value")
	}
	return n, nil
}

func parseNode(dec *json.Decoder) (*jnode, error) {
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	switch v := tok.(type) {
	case json.Delim:
		switch v {
		case '{':
			n := &jnode{kind: 'o'}
			for dec.More() {
				kt, err := dec.Token()
				if err != nil {
					return nil, err
				}
				k, ok := kt.(string)
				if !ok {
					return nil, fmt.Errorf("object key %v is not a string", kt)
				}
				val, err := parseNode(dec)
				if err != nil {
					return nil, err
				}
				n.keys = append(n.keys, k)
				n.vals = append(n.vals, val)
			}
			_, err := dec.Token() // '}'
			return n, err
		case '[':
			n := &jnode{kind: 'a', elems: []*jnode{}}
			for dec.More() {
				e, err := parseNode(dec)
				if err != nil {
					return nil, err
				}
				n.elems = append(n.elems, e)
			}
			_, err := dec.Token() // ']'
			return n, err
		}
		return nil, fmt.Errorf("unexpected delimiter %v", v)
	case string:
		return &jnode{kind: 's', str: v}, nil
	case json.Number:
		return &jnode{kind: 'n', num: v}, nil
	case bool:
		return &jnode{kind: 'b', b: v}, nil
	case nil:
		return &jnode{kind: 'z'}, nil
	}
	return nil, fmt.Errorf("unexpected token %T", tok)
}

// pretty writes n indented by two spaces, with a final newline. Strings
// are written as Go's encoder writes them, without HTML escaping.
func (n *jnode) pretty() []byte {
	var b bytes.Buffer
	n.write(&b, "")
	b.WriteByte('\n')
	return b.Bytes()
}

func (n *jnode) write(b *bytes.Buffer, indent string) {
	switch n.kind {
	case 'o':
		if len(n.keys) == 0 {
			b.WriteString("{}")
			return
		}
		b.WriteString("{\n")
		for i, k := range n.keys {
			b.WriteString(indent + "  ")
			writeJSONString(b, k)
			b.WriteString(": ")
			n.vals[i].write(b, indent+"  ")
			if i < len(n.keys)-1 {
				b.WriteByte(',')
			}
			b.WriteByte('\n')
		}
		b.WriteString(indent + "}")
	case 'a':
		if len(n.elems) == 0 {
			b.WriteString("[]")
			return
		}
		b.WriteString("[\n")
		for i, e := range n.elems {
			b.WriteString(indent + "  ")
			e.write(b, indent+"  ")
			if i < len(n.elems)-1 {
				b.WriteByte(',')
			}
			b.WriteByte('\n')
		}
		b.WriteString(indent + "]")
	case 's':
		writeJSONString(b, n.str)
	case 'n':
		b.WriteString(n.num.String())
	case 'b':
		if n.b {
			b.WriteString("true")
		} else {
			b.WriteString("false")
		}
	case 'z':
		b.WriteString("null")
	}
}

func writeJSONString(b *bytes.Buffer, s string) {
	var tmp bytes.Buffer
	enc := json.NewEncoder(&tmp)
	enc.SetEscapeHTML(false)
	enc.Encode(s) // a string always encodes
	b.Write(bytes.TrimRight(tmp.Bytes(), "\n"))
}

// get returns the value of key in object n, or nil.
func (n *jnode) get(key string) *jnode {
	if n == nil || n.kind != 'o' {
		return nil
	}
	for i, k := range n.keys {
		if k == key {
			return n.vals[i]
		}
	}
	return nil
}

// walk calls f on every value with the key it sits under ("" for array
// elements and the root).
func (n *jnode) walk(key string, f func(key string, v *jnode)) {
	f(key, n)
	switch n.kind {
	case 'o':
		for i, k := range n.keys {
			n.vals[i].walk(k, f)
		}
	case 'a':
		for _, e := range n.elems {
			e.walk("", f)
		}
	}
}

// shape is the top-level shape of a response: the root's JSON type and,
// for an object, its keys; for an array, the type of its elements and the
// union of their keys.
func (n *jnode) shape() string {
	kindName := map[byte]string{'o': "object", 'a': "array", 's': "string", 'n': "number", 'b': "boolean", 'z': "null"}
	switch n.kind {
	case 'o':
		keys := append([]string(nil), n.keys...)
		sort.Strings(keys)
		return "object{" + strings.Join(keys, ",") + "}"
	case 'a':
		if len(n.elems) == 0 {
			return "array(empty)"
		}
		kinds := map[string]bool{}
		keys := map[string]bool{}
		for _, e := range n.elems {
			kinds[kindName[e.kind]] = true
			for _, k := range e.keys {
				keys[k] = true
			}
		}
		return "array of " + strings.Join(sortedKeys(kinds), "|") + "{" + strings.Join(sortedKeys(keys), ",") + "}"
	}
	return kindName[n.kind]
}

func sortedKeys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// scrubber replaces host-specific values (host names, IP addresses, ports,
// temp directory paths) with stable placeholders and leaves everything
// else (ids, timestamps, metric values) as it was.
type scrubber struct {
	hostPort  *regexp.Regexp // host:port, host a known name or an IPv4 address
	ipv4      *regexp.Regexp
	hosts     *regexp.Regexp  // long host names, anywhere in a string
	shortHost map[string]bool // short host names ("vm"), only as a whole value
	tmp       *regexp.Regexp  // temp directory paths
	ports     map[string]bool // port numbers seen, for the leak check
	applied   map[string]bool // rules that changed something, for the manifest
}

func newScrubber(hostnames []string, tmpDirs []string, ports []string) *scrubber {
	s := &scrubber{
		ipv4:      regexp.MustCompile(`\b\d{1,3}(?:\.\d{1,3}){3}\b`),
		shortHost: map[string]bool{},
		ports:     map[string]bool{},
		applied:   map[string]bool{},
	}
	var all, long []string
	for _, h := range hostnames {
		if h == "" || h == "localhost" {
			continue
		}
		all = append(all, regexp.QuoteMeta(h))
		if len(h) >= 6 {
			long = append(long, regexp.QuoteMeta(h))
		} else {
			s.shortHost[h] = true
		}
	}
	// Longest first, so an FQDN wins over its short name.
	byLen := func(l []string) { sort.Slice(l, func(i, j int) bool { return len(l[i]) > len(l[j]) }) }
	byLen(all)
	byLen(long)
	hostAlt := strings.Join(append(all, `localhost`, `\d{1,3}(?:\.\d{1,3}){3}`), "|")
	s.hostPort = regexp.MustCompile(`\b(?:` + hostAlt + `):\d{1,5}\b`)
	if len(long) > 0 {
		s.hosts = regexp.MustCompile(`\b(?:` + strings.Join(long, "|") + `)\b`)
	}
	var ts []string
	for _, d := range tmpDirs {
		d = strings.TrimRight(d, "/")
		if d != "" && d != "/" {
			ts = append(ts, regexp.QuoteMeta(d))
		}
	}
	byLen(ts)
	ts = append(ts, `/tmp`)
	s.tmp = regexp.MustCompile(`(?:` + strings.Join(ts, "|") + `)\b(?:/[^\s"',;:]*)?`)
	for _, p := range ports {
		s.ports[p] = true
	}
	return s
}

// str scrubs one string.
func (s *scrubber) str(v string) string {
	out := s.hostPort.ReplaceAllString(v, "localhost:<port>")
	if out != v {
		s.applied["host:port → localhost:<port>"] = true
	}
	o2 := s.tmp.ReplaceAllString(out, "/tmp/<scrubbed>")
	if o2 != out {
		s.applied["temp directory paths → /tmp/<scrubbed>"] = true
	}
	out = o2
	o3 := s.ipv4.ReplaceAllString(out, "localhost")
	if s.hosts != nil {
		o3 = s.hosts.ReplaceAllString(o3, "localhost")
	}
	if s.shortHost[o3] {
		o3 = "localhost"
	}
	if o3 != out {
		s.applied["host names and IP addresses → localhost"] = true
	}
	return o3
}

// tree scrubs a response in place: every string, and port numbers under
// keys named like ports (dataPort, jmxPort, ...; -1 "none" is kept).
func (s *scrubber) tree(n *jnode) {
	n.walk("", func(key string, v *jnode) {
		switch v.kind {
		case 's':
			v.str = s.str(v.str)
		case 'n':
			if strings.HasSuffix(strings.ToLower(key), "port") {
				if i, err := v.num.Int64(); err == nil && i > 0 {
					s.ports[v.num.String()] = true
					v.num = "0"
					s.applied["port numbers (dataPort, jmxPort, ...) → 0"] = true
				}
			}
		}
		if v.kind == 'o' {
			for i, k := range v.keys {
				if nk := s.str(k); nk != k {
					v.keys[i] = nk
				}
			}
		}
	})
}

// leaks lists host-specific text still present in text.
func (s *scrubber) leaks(text string, literal []string) []string {
	var out []string
	for _, l := range literal {
		if l != "" && strings.Contains(text, l) {
			out = append(out, fmt.Sprintf("%q", l))
		}
	}
	for p := range s.ports {
		if regexp.MustCompile(`:` + regexp.QuoteMeta(p) + `\b`).MatchString(text) {
			out = append(out, "port "+p)
		}
	}
	if m := s.ipv4.FindString(text); m != "" {
		out = append(out, "IP address "+m)
	}
	for h := range s.shortHost {
		if strings.Contains(text, `"`+h+`"`) || strings.Contains(text, h+":") {
			out = append(out, "host name "+h)
		}
	}
	return out
}

// rules lists the scrubbing rules that changed something, sorted; empty,
// not nil, when none did (a manifest writes "scrubbed": []).
func (s *scrubber) rules() []string {
	out := make([]string, 0, len(s.applied))
	for rule := range s.applied {
		out = append(out, rule)
	}
	sort.Strings(out)
	return out
}
