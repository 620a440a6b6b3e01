package views

// Isolate wraps a name from a backend or the configuration (job, vertex,
// topic, group, cluster or endpoint name) in Unicode first-strong isolates
// (U+2068 … U+2069) when it holds right-to-left characters or bidi
// controls, so that a right-to-left override inside the name cannot reorder
// the text around it. It is for places where no <bdi> element can go: the
// document <title>, attributes such as title=, and sentences built as one
// string. In HTML content, put the name in <bdi> instead.
func Isolate(s string) string {
	for _, r := range s {
		if needsIsolation(r) {
			return "\u2068" + s + "\u2069"
		}
	}
	return s
}

// needsIsolation reports right-to-left letters (Hebrew, Arabic, Syriac,
// Thaana, NKo, Samaritan, Mandaic, their presentation forms, and the
// right-to-left ranges of the supplementary planes) and the bidi controls
// (LRM, RLM, embeddings, overrides and isolates).
func needsIsolation(r rune) bool {
	return r >= 0x0590 && r <= 0x08FF || r >= 0xFB1D && r <= 0xFEFF || r >= 0x200E && r <= 0x200F ||
		r >= 0x202A && r <= 0x202E || r >= 0x2066 && r <= 0x2069 || r == 0x061C ||
		r >= 0x10800 && r <= 0x10FFF || r >= 0x1E800 && r <= 0x1EFFF
}
