package main

import (
	"errors"
	"go/ast"
	"go/parser"
	"go/token"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode"

	"github.com/skewscope/skewscope/collectors"
	"github.com/skewscope/skewscope/collectors/flink"
	"github.com/skewscope/skewscope/collectors/kafka"
)

// badConfigs returns collector configs that between them fail every check
// of kafka.Config.Validate and flink.Config.Validate.
func badConfigs() (ks []kafka.Config, fs []flink.Config) {
	const missing = "/nonexistent/file"
	k := func(edit func(*kafka.Config)) {
		c := kafka.Config{Name: "a", Brokers: []string{"x:1"}}
		edit(&c)
		ks = append(ks, c)
	}
	oauth := kafka.OAuthConfig{TokenEndpoint: "https://idp/token", ClientID: "c", ClientSecret: "s"}
	k(func(c *kafka.Config) { c.Name, c.Brokers, c.Topics = "", nil, []string{""} })
	k(func(c *kafka.Config) { c.Brokers = []string{""} })
	k(func(c *kafka.Config) { c.SchemaRegistry = "registry:8081" })
	k(func(c *kafka.Config) { c.SchemaRegistry = "https://u:pw@registry" })
	k(func(c *kafka.Config) {
		c.PollInterval, c.RequestTimeout, c.TimeTableSize, c.LogStartRefresh = -1, -1, 1, -1
	})
	k(func(c *kafka.Config) { c.TLS = kafka.TLSConfig{CAFile: missing, CertFile: missing} })
	k(func(c *kafka.Config) { c.TLS = kafka.TLSConfig{Enabled: true, KeyFile: missing} })
	k(func(c *kafka.Config) { c.Groups = kafka.GroupFilter{Allow: []string{"("}, Deny: []string{"ok", "["}} })
	k(func(c *kafka.Config) { c.SASL = kafka.SASLConfig{Username: "u"} })
	k(func(c *kafka.Config) { c.SASL = kafka.SASLConfig{Mechanism: "GSSAPI"} })
	k(func(c *kafka.Config) { c.SASL = kafka.SASLConfig{Mechanism: kafka.SASLPlain, Token: "t"} })
	k(func(c *kafka.Config) {
		c.SASL = kafka.SASLConfig{Mechanism: kafka.SASLPlain, Username: "u", Password: "p", PasswordFile: missing}
	})
	k(func(c *kafka.Config) {
		c.SASL = kafka.SASLConfig{Mechanism: kafka.SASLScramSHA256, Username: "u", PasswordFile: missing}
	})
	k(func(c *kafka.Config) { c.SASL = kafka.SASLConfig{Mechanism: kafka.SASLOAuthBearer, Password: "p"} })
	k(func(c *kafka.Config) {
		c.SASL = kafka.SASLConfig{Mechanism: kafka.SASLOAuthBearer, Token: "t", TokenFile: missing}
	})
	k(func(c *kafka.Config) {
		c.SASL = kafka.SASLConfig{Mechanism: kafka.SASLOAuthBearer, OAuth: kafka.OAuthConfig{ClientSecret: "s", ClientSecretFile: missing}}
	})
	k(func(c *kafka.Config) {
		o := oauth
		o.TokenEndpoint, o.ClientSecret, o.ClientSecretFile = "/token", "", missing
		c.SASL = kafka.SASLConfig{Mechanism: kafka.SASLOAuthBearer, OAuth: o}
	})
	k(func(c *kafka.Config) {
		o := oauth
		o.TokenEndpoint, o.ClientSecret = "http://idp.example/token", ""
		c.SASL = kafka.SASLConfig{Mechanism: kafka.SASLOAuthBearer, OAuth: o}
	})

	f := func(edit func(*flink.Config)) {
		c := flink.Config{Name: "f", URL: "https://a"}
		edit(&c)
		fs = append(fs, c)
	}
	f(func(c *flink.Config) { c.Name, c.URL = "", "" })
	f(func(c *flink.Config) { c.Name, c.URL = "bad name", "http://a b:pw@x/%zz" })
	f(func(c *flink.Config) { c.URL = "https://u:pw@a" })
	f(func(c *flink.Config) { c.URL = "ftp://a" })
	f(func(c *flink.Config) { c.URL = "http:///x" })
	f(func(c *flink.Config) {
		c.BearerToken, c.BearerTokenFile = "t", missing
		c.BasicAuth = &flink.BasicAuth{Password: "p", PasswordFile: missing}
	})
	f(func(c *flink.Config) { c.TLS = flink.TLSConfig{CAFile: missing, CertFile: missing} })
	f(func(c *flink.Config) { c.TLS = flink.TLSConfig{KeyFile: missing} })
	f(func(c *flink.Config) {
		c.Jobs, c.PollInterval, c.RequestTimeout = []string{"a", ""}, time.Millisecond, -1
		c.MaxInFlight, c.MaxRequestsPerSecond, c.MaxJobs = 65, -1, -1
	})
	f(func(c *flink.Config) { c.IDRefresh = time.Second })
	return ks, fs
}

// badProblems returns the problems Validate reports for badConfigs.
func badProblems(t *testing.T) (kafkaProblems, flinkProblems collectors.FieldErrors) {
	t.Helper()
	add := func(to *collectors.FieldErrors, err error) {
		var errs collectors.FieldErrors
		if !errors.As(err, &errs) {
			t.Fatalf("Validate() = %v, want collectors.FieldErrors", err)
		}
		*to = append(*to, errs...)
	}
	ks, fs := badConfigs()
	for _, c := range ks {
		add(&kafkaProblems, c.Validate())
	}
	for _, c := range fs {
		add(&flinkProblems, c.Validate())
	}
	return kafkaProblems, flinkProblems
}

// notInFile are keys that Validate checks but the file does not have: the
// dashboard leaves them at their defaults.
var notInFile = map[string]bool{"timeTableSize": true}

// TestValidatePathsAreYAMLKeys: every path the collectors' Validate methods
// report a problem at is a key of a kafka.clusters[] or flink.endpoints[]
// entry, and the bad configs drive every path the methods' source names.
func TestValidatePathsAreYAMLKeys(t *testing.T) {
	kafkaProblems, flinkProblems := badProblems(t)
	for _, tc := range []struct {
		source   string
		entry    reflect.Type
		problems collectors.FieldErrors
	}{
		{"../../collectors/kafka/config.go", reflect.TypeFor[kafkaClusterYAML](), kafkaProblems},
		{"../../collectors/flink/config.go", reflect.TypeFor[flinkEndpointYAML](), flinkProblems},
	} {
		driven := map[string]bool{}
		for _, e := range tc.problems {
			driven[indexRE.ReplaceAllString(e.Path, "[%d]")] = true
			if notInFile[e.Path] {
				continue
			}
			if err := yamlKey(tc.entry, e.Path); err != nil {
				t.Errorf("%s: problem %q: %v", tc.source, e, err)
			}
		}
		for _, p := range sourcePaths(t, tc.source) {
			if !driven[p] {
				t.Errorf("%s: no bad config drives a problem at %q", tc.source, p)
			}
		}
	}
}

var indexRE = regexp.MustCompile(`\[\d+\]`)

// yamlKey reports whether path ("" the entry itself, else keys joined by
// ".", each with an optional [i]) is a key of the YAML type t.
func yamlKey(t reflect.Type, path string) error {
	if path == "" {
		return nil
	}
	for _, seg := range strings.Split(path, ".") {
		key, index, _ := strings.Cut(seg, "[")
		for t.Kind() == reflect.Pointer {
			t = t.Elem()
		}
		if t.Kind() != reflect.Struct {
			return errors.New(key + " is below a value, not a section")
		}
		f, ok := yamlField(t, key)
		if !ok {
			return errors.New(key + " is not a key of the file's " + t.Name())
		}
		t = f.Type
		if index != "" {
			if t.Kind() != reflect.Slice {
				return errors.New(key + " is not a list")
			}
			t = t.Elem()
		}
	}
	return nil
}

func yamlField(t reflect.Type, key string) (reflect.StructField, bool) {
	for i := range t.NumField() {
		if f := t.Field(i); strings.Split(f.Tag.Get("yaml"), ",")[0] == key {
			return f, true
		}
	}
	return reflect.StructField{}, false
}

// sourcePaths returns the paths the Go file reports problems at, as
// written: the literal path argument of every errs.Add, fileExists and
// checkFile call ("[%d]" for an index).
func sourcePaths(t *testing.T, file string) []string {
	t.Helper()
	f, err := parser.ParseFile(token.NewFileSet(), file, nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	var paths []string
	ast.Inspect(f, func(n ast.Node) bool {
		call, ok := n.(*ast.CallExpr)
		if !ok {
			return true
		}
		arg := -1 // the path argument's index
		switch fn := call.Fun.(type) {
		case *ast.SelectorExpr:
			if x, ok := fn.X.(*ast.Ident); ok && x.Name == "errs" && fn.Sel.Name == "Add" {
				arg = 0
			}
		case *ast.Ident:
			switch fn.Name {
			case "checkFile":
				arg = 0
			case "fileExists":
				arg = 1
			}
		}
		if arg < 0 || arg >= len(call.Args) {
			return true
		}
		e := call.Args[arg]
		if s, ok := e.(*ast.CallExpr); ok && len(s.Args) > 0 { // fmt.Sprintf("jobs[%d]", i)
			e = s.Args[0]
		}
		if lit, ok := e.(*ast.BasicLit); ok && lit.Kind == token.STRING {
			p, err := strconv.Unquote(lit.Value)
			if err != nil {
				t.Fatal(err)
			}
			paths = append(paths, p)
		}
		return true
	})
	if len(paths) < 10 {
		t.Fatalf("sourcePaths(%s) = %q, want the paths of every check", file, paths)
	}
	return paths
}

// goFieldNames returns the exported field names of the structs below each
// type. All-capital names (URL, TLS, SASL) are left out: they are also the
// words.
func goFieldNames(types ...reflect.Type) map[string]bool {
	names := map[string]bool{}
	var walk func(reflect.Type)
	walk = func(t reflect.Type) {
		for t.Kind() == reflect.Pointer || t.Kind() == reflect.Slice {
			t = t.Elem()
		}
		if t.Kind() != reflect.Struct || t.PkgPath() == "time" {
			return
		}
		for i := range t.NumField() {
			f := t.Field(i)
			if f.IsExported() && strings.ToUpper(f.Name) != f.Name {
				names[f.Name] = true
			}
			walk(f.Type)
		}
	}
	for _, t := range types {
		walk(t)
	}
	return names
}

// goNameIn returns a Go field name of the configuration structs that msg
// shows, or "".
func goNameIn(msg string) string {
	names := goFieldNames(reflect.TypeFor[kafka.Config](), reflect.TypeFor[flink.Config](), reflect.TypeFor[fileConfig]())
	for _, w := range strings.FieldsFunc(msg, func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) }) {
		if names[w] {
			return w
		}
	}
	return ""
}

// TestValidateMessagesShowNoGoNames: no problem of the collectors'
// Validate methods names a Go field of the configuration.
func TestValidateMessagesShowNoGoNames(t *testing.T) {
	if got := goNameIn("url: must not contain user info; use BasicAuth"); got != "BasicAuth" {
		t.Fatalf(`goNameIn("… use BasicAuth") = %q, want "BasicAuth"`, got)
	}
	kafkaProblems, flinkProblems := badProblems(t)
	for _, e := range append(kafkaProblems, flinkProblems...) {
		if w := goNameIn(e.Error()); w != "" {
			t.Errorf("problem %q names the Go field %s", e, w)
		}
	}
}
