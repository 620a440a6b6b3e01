package assign

import (
	"unicode/utf16"
	"unicode/utf8"
)

// JavaText returns the text of new String(bytes, StandardCharsets.UTF_8) for
// the bytes of s, as Go UTF-8: s itself when it is valid UTF-8, otherwise s
// with each malformed sequence replaced by one U+FFFD by the JDK's rule (see
// StringHashCode). The result is valid UTF-8 with no lone surrogate, and
// StringHashCode(JavaText(s)) == StringHashCode(s): it is the key a Flink job
// sees after Kafka's StringDeserializer or SimpleStringSchema, fit to show
// and to compare.
func JavaText(s string) string {
	if utf8.ValidString(s) {
		return s
	}
	return string(utf16.Decode(appendJavaUTF16(nil, s)))
}
