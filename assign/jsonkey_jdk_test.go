package assign

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// jsonKeyCases are JSON string literals whose escapes mean the same in Java
// source, so that javac itself decodes them (no \/, and no \u escape of a
// quote, backslash or line end, which Java unescapes before lexing).
var jsonKeyCases = []string{
	`""`, `"a"`, `"\ud800"`, `"\uDBFF"`, `"\udc00"`, `"a\ud800b"`, `"\udc00\ud800"`,
	`"\ud83d\ude00"`, `"😀"`, `"\u00e9t\u00E9"`, `"tab\tnl\nq\"b\\"`, `"é\ud800"`, `"\ud800\ud800\udc00"`,
	`"x\uDFFF"`, `"\u0000"`,
}

// TestJSONKeysMatchJDK writes each JSON literal as a Java string literal
// and requires StringHashCodeUTF16(UnquoteJSONString(lit)), HashKeyJava for
// strings and chars, and HashKey of a tuple of them to equal the JDK's
// hashCode: the JDK keeps a lone surrogate such as "\uD800" as one char
// (55296), where Go's encoding/json would give U+FFFD (65533).
func TestJSONKeysMatchJDK(t *testing.T) {
	java, err := exec.LookPath("java")
	if err != nil {
		t.Fatalf("java is not on PATH: this test needs Java 17 or newer (on Debian: apt-get install openjdk-17-jdk-headless): %v", err)
	}
	var src strings.Builder
	src.WriteString("public class JsonKeys { public static void main(String[] a) {\n")
	for _, lit := range jsonKeyCases {
		src.WriteString("System.out.println(" + lit + ".hashCode());\n")
	}
	for _, lit := range jsonKeyCases {
		src.WriteString("{ String s = " + lit + "; System.out.println(s.length() == 1 ? Character.valueOf(s.charAt(0)).hashCode() : -1); }\n")
	}
	// Flink's Tuple2.hashCode: 31 * f0.hashCode() + f1.hashCode().
	for i, lit := range jsonKeyCases {
		src.WriteString("System.out.println(31 * " + lit + ".hashCode() + " + jsonKeyCases[(i+1)%len(jsonKeyCases)] + ".hashCode());\n")
	}
	src.WriteString("}}\n")
	file := filepath.Join(t.TempDir(), "JsonKeys.java")
	if err := os.WriteFile(file, []byte(src.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(java, file).CombinedOutput()
	if err != nil {
		t.Fatalf("java JsonKeys.java: %v\n%s", err, out)
	}
	lines := strings.Fields(string(out))
	n := len(jsonKeyCases)
	if len(lines) != 3*n {
		t.Fatalf("JsonKeys.java answered %d lines for %d cases", len(lines), 3*n)
	}
	jdk := func(i int) int32 {
		v, err := strconv.ParseInt(lines[i], 10, 32)
		if err != nil {
			t.Fatal(err)
		}
		return int32(v)
	}
	for i, lit := range jsonKeyCases {
		s, err := UnquoteJSONString(lit)
		if err != nil {
			t.Fatalf("UnquoteJSONString(%s) = %v", lit, err)
		}
		want := jdk(i)
		if got := StringHashCodeUTF16(s); got != want {
			t.Errorf("StringHashCodeUTF16(UnquoteJSONString(%s)) = %d, want %d (JDK)", lit, got, want)
		}
		if got, err := HashKeyJava(KeyType{Kind: KindString}, s); got != want || err != nil {
			t.Errorf("HashKeyJava(string, %s) = %d, %v, want %d (JDK)", lit, got, err, want)
		}
		if wantChar := jdk(n + i); wantChar >= 0 {
			if got, err := HashKeyJava(KeyType{Kind: KindChar}, s); got != wantChar || err != nil {
				t.Errorf("HashKeyJava(char, %s) = %d, %v, want %d (JDK)", lit, got, err, wantChar)
			}
		}
		tuple := "[" + lit + ", " + jsonKeyCases[(i+1)%n] + "]"
		tt, _ := ParseKeyType("tuple<string,string>")
		if got, err := HashKey(tt, tuple); got != jdk(2*n+i) || err != nil {
			t.Errorf("HashKey(tuple<string,string>, %s) = %d, %v, want %d (JDK)", tuple, got, err, jdk(2*n+i))
		}
	}
}

func TestUnquoteJSONString(t *testing.T) {
	for _, tc := range []struct {
		lit  string
		want JavaString
	}{
		{`"\ud800"`, JavaString{0xD800}},
		{`"a\/b"`, JavaString{'a', '/', 'b'}},
		{"\"\xff\"", JavaString{0xFFFD}},
		{`"\ud83d\ude00"`, JavaString{0xD83D, 0xDE00}},
		{`"😀"`, JavaString{0xD83D, 0xDE00}},
	} {
		got, err := UnquoteJSONString(tc.lit)
		if err != nil || !slices.Equal(got, tc.want) {
			t.Errorf("UnquoteJSONString(%s) = %04x, %v, want %04x", tc.lit, got, err, tc.want)
		}
	}
	for _, bad := range []string{`"`, `abc`, `"\x"`, `"\u12"`, `"\u+123"`, `"a"b"`, "\"\n\"", `"\"`} {
		if got, err := UnquoteJSONString(bad); err == nil {
			t.Errorf("UnquoteJSONString(%s) = %04x, want an error", bad, got)
		}
	}
	if !(JavaString{0xD800}).HasLoneSurrogate() || (JavaString{0xD83D, 0xDE00}).HasLoneSurrogate() || !(JavaString{0xDE00, 0xD83D}).HasLoneSurrogate() {
		t.Error("HasLoneSurrogate is wrong on a pair or a lone surrogate")
	}
}

// TestAppendJSONString appends to what a buffer holds, takes unescaped
// bytes as the text reader gives them (a control character included) and
// names a bad escape.
func TestAppendJSONString(t *testing.T) {
	latin1 := func(dst JavaString, b []byte) JavaString {
		for _, c := range b {
			dst = append(dst, uint16(c))
		}
		return dst
	}
	got, err := AppendJSONString(JavaString{'>'}, []byte("a\n\xe9\\u00E9\\ud800\\/"), latin1)
	if want := (JavaString{'>', 'a', '\n', 0xE9, 0xE9, 0xD800, '/'}); err != nil || !slices.Equal(got, want) {
		t.Errorf("AppendJSONString = %04x, %v, want %04x", got, err, want)
	}
	for raw, want := range map[string]string{`a\`: "ends inside an escape", `\u12`: `\u needs four hex digits`, `\u12g4`: `\u12g4 is not four hex digits`, `\x`: `unknown escape \x`} {
		if _, err := AppendJSONString(nil, []byte(raw), latin1); err == nil || err.Error() != want {
			t.Errorf("AppendJSONString(%s) = %v, want %q", raw, err, want)
		}
	}
}
