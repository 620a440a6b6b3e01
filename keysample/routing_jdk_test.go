package keysample

import (
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/skewscope/skewscope/assign"
)

// routingStrings are record keys as bytes: ASCII ids, names with accents and
// other scripts, e-mails, UUIDs, emoji, and malformed UTF-8 (truncated and
// corrupted multibyte text, surrogates encoded in UTF-8, overlongs, stray
// continuation and lead bytes).
func routingStrings(r *rand.Rand) []string {
	out := []string{
		"", "customer-42", "José", "Zoë Saldaña", "Ærøskøbing", "Łódź", "Дмитрий", "東京都", "محمد", "नमस्ते",
		"jane.doe+tag@example.com", "üser@bücher.de", "550e8400-e29b-41d4-a716-446655440000",
		"😀", "👩‍👩‍👧‍👦", "🇫🇷", "key-🔑-42", "\uFFFD", "\x00", "tab\tnl\n",
		"caf\xc3", "\xe2\x82", "\xe2\x82A", "\xf0\x9f\x98", "\xed\xa0\x80", "\xed\xbf\xbf\xed\xa0\x80", "\xff",
		"\xc0\x80", "\xe0\x80\x80", "\xf4\x90\x80\x80", "\xf0\x9fA\x80", "\x80\x80", "name-\xf5\x80",
	}
	names := []string{"anna", "björn", "çelik", "dūlė", "élodie", "fjǫrð", "gül", "håkon", "ïsa", "jürgen", "李", "김", "😀", "ñandú"}
	for range 1000 { // names and e-mails
		n := names[r.IntN(len(names))] + "." + names[r.IntN(len(names))]
		if r.IntN(2) == 0 {
			n += "@" + names[r.IntN(len(names))] + ".example"
		}
		out = append(out, n+strconv.Itoa(r.IntN(10000)))
	}
	for range 500 { // UUIDs
		var b [16]byte
		for i := range b {
			b[i] = byte(r.Uint32())
		}
		h := hex.EncodeToString(b[:])
		out = append(out, h[:8]+"-"+h[8:12]+"-"+h[12:16]+"-"+h[16:20]+"-"+h[20:])
	}
	for range 1000 { // random code points of every width, some corrupted
		var b []byte
		for range 1 + r.IntN(8) {
			switch r.IntN(4) {
			case 0:
				b = append(b, byte('a'+r.IntN(26)))
			case 1:
				b = utf8.AppendRune(b, rune(0x80+r.IntN(0x780)))
			case 2:
				b = utf8.AppendRune(b, rune(0x800+r.IntN(0xD000)))
			default:
				b = utf8.AppendRune(b, rune(0x10000+r.IntN(0x100000)))
			}
		}
		switch r.IntN(4) {
		case 0:
			b = b[:r.IntN(len(b)+1)] // truncated, maybe inside a character
		case 1:
			b[r.IntN(len(b))] = byte(r.IntN(256))
		case 2:
			i := r.IntN(len(b) + 1)
			b = slices.Insert(b, i, []byte{0x80, 0xc2, 0xe0, 0xed, 0xf0, 0xf4, 0xff}[r.IntN(7)])
		}
		out = append(out, string(b))
	}
	return out
}

// TestRoutingMatchesJDK: for thousands of string, int and long keys read
// from Kafka bytes, Key's Hash equals the JDK's hashCode (for strings, of
// new String(bytes, UTF_8), malformed bytes included, and Text is that
// string), and Hash and its key group equal assign.HashKey's for the same
// text and type, whatever format (raw bytes, JSON field, CSV column) carried
// the key.
func TestRoutingMatchesJDK(t *testing.T) {
	java, err := exec.LookPath("java")
	if err != nil {
		t.Fatalf("java is not on PATH: this test needs Java 17 or newer, whose own hashCode is the reference (on Debian: apt-get install openjdk-17-jdk-headless): %v", err)
	}
	r := rand.New(rand.NewPCG(42, 7))
	strs := routingStrings(r)
	ints := []int32{0, 1, -1, math.MaxInt32, math.MinInt32}
	for range 1000 {
		ints = append(ints, int32(r.Uint32()))
	}
	longs := []int64{0, 1, -1, math.MaxInt64, math.MinInt64, 1 << 32, -1 << 32, math.MaxInt32 + 1}
	for range 1000 {
		longs = append(longs, int64(r.Uint64())>>r.IntN(64))
	}
	var in strings.Builder
	for _, s := range strs {
		fmt.Fprintf(&in, "s %s\n", hex.EncodeToString([]byte(s)))
	}
	for _, v := range ints {
		fmt.Fprintf(&in, "i %d\n", v)
	}
	for _, v := range longs {
		fmt.Fprintf(&in, "l %d\n", v)
	}
	cmd := exec.Command(java, filepath.Join("testdata", "KeyHashes.java"))
	cmd.Stdin = strings.NewReader(in.String())
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("java testdata/KeyHashes.java: %v\n%s", err, stderr.String())
	}
	lines := strings.Split(strings.TrimSuffix(string(out), "\n"), "\n")
	if len(lines) != len(strs)+len(ints)+len(longs) {
		t.Fatalf("KeyHashes.java answered %d lines for %d cases", len(lines), len(strs)+len(ints)+len(longs))
	}
	jdk := func(line string) (int32, []uint16) {
		f := strings.Fields(line)
		h, err := strconv.ParseInt(f[0], 10, 32)
		if err != nil {
			t.Fatalf("KeyHashes.java line %q: %v", line, err)
		}
		var us []uint16
		for _, x := range f[1:] {
			u, err := strconv.ParseUint(x, 16, 16)
			if err != nil {
				t.Fatalf("KeyHashes.java line %q: %v", line, err)
			}
			us = append(us, uint16(u))
		}
		return int32(h), us
	}
	maxPs := []int{1, 7, 128, 1000, 32768}
	sameRouting := func(what string, typ assign.KeyType, k Key, want int32) {
		t.Helper()
		h, err := assign.HashKey(typ, k.Text)
		if err != nil || h != k.Hash || k.Hash != want {
			t.Errorf("%s: Key = %+v, assign.HashKey(%s, %q) = %d, %v, JDK %d", what, k, typ, k.Text, h, err, want)
			return
		}
		for _, m := range maxPs {
			if a, b := assign.KeyGroupForHash(k.Hash, m), assign.KeyGroupForHash(h, m); a != b {
				t.Errorf("%s: key group at max parallelism %d = %d, assign.HashKey's %d", what, m, a, b)
			}
		}
	}
	keyOf := func(spec KeySpec, key, value []byte) Key {
		t.Helper()
		k, err := spec.Key(key, value)
		if err != nil {
			t.Fatalf("%s.Key(%q, %q) = %v", spec, key, value, err)
		}
		return k
	}
	strType, intType, longType := assign.KeyType{Kind: assign.KindString}, assign.KeyType{Kind: assign.KindInt}, assign.KeyType{Kind: assign.KindLong}
	keyString, valueString := mustSpec(t, "key", "string", "", ""), mustSpec(t, "value", "string", "", "")
	jsonString, csvString := mustSpec(t, "value", "json", "k", "string"), mustSpec(t, "value", "csv", "1", "string")
	malformed := 0
	for i, s := range strs {
		want, units := jdk(lines[i])
		k := keyOf(keyString, []byte(s), nil)
		if got := utf16.Encode([]rune(k.Text)); !slices.Equal(got, units) {
			t.Errorf("Key(% x).Text = %q (%04x), JDK's new String(bytes, UTF_8) %04x", s, k.Text, got, units)
		}
		sameRouting(fmt.Sprintf("record key % x", s), strType, k, want)
		if v := keyOf(valueString, nil, []byte(s)); v != k {
			t.Errorf("value % x: Key = %+v, as a record key %+v", s, v, k)
		}
		if !utf8.ValidString(s) {
			malformed++
			continue // JSON and CSV carry text, not bytes
		}
		lit, _ := json.Marshal(s)
		sameRouting(fmt.Sprintf("JSON field %s", lit), strType, keyOf(jsonString, nil, []byte(`{"k":`+string(lit)+`}`)), want)
		if !strings.ContainsAny(s, ",\"\r\n") {
			sameRouting(fmt.Sprintf("CSV column %q", s), strType, keyOf(csvString, nil, []byte("x,"+s+",y")), want)
		}
	}
	jsonInt, csvInt := mustSpec(t, "value", "json", "k", "int"), mustSpec(t, "value", "csv", "0", "int")
	for i, v := range ints {
		want, _ := jdk(lines[len(strs)+i])
		sameRouting(fmt.Sprintf("int %d", v), intType, keyOf(mustSpec(t, "key", "int", "", ""), be32(v), nil), want)
		sameRouting(fmt.Sprintf("JSON int %d", v), intType, keyOf(jsonInt, nil, fmt.Appendf(nil, `{"k":%d}`, v)), want)
		sameRouting(fmt.Sprintf("CSV int %d", v), intType, keyOf(csvInt, nil, fmt.Appendf(nil, "%d,x", v)), want)
	}
	jsonLong, csvLong := mustSpec(t, "value", "json", "a.k", "long"), mustSpec(t, "value", "csv", "0", "long")
	for i, v := range longs {
		want, _ := jdk(lines[len(strs)+len(ints)+i])
		sameRouting(fmt.Sprintf("long %d", v), longType, keyOf(mustSpec(t, "value", "long", "", ""), nil, be64(v)), want)
		sameRouting(fmt.Sprintf("JSON long %d", v), longType, keyOf(jsonLong, nil, fmt.Appendf(nil, `{"a":{"k":%d}}`, v)), want)
		sameRouting(fmt.Sprintf("CSV long %d", v), longType, keyOf(csvLong, nil, fmt.Appendf(nil, "%d", v)), want)
	}
	t.Logf("%d strings (%d not valid UTF-8), %d ints and %d longs hash as the JDK does", len(strs), malformed, len(ints), len(longs))
}
