package views

import (
	"encoding/json"
	"strconv"
)

func kindTitle(kind string) string {
	switch kind {
	case "computed":
		return "computed now from Flink's formulas and the inputs on this page"
	case "given":
		return "from the numbers entered on this page"
	case "estimated":
		return "estimated: derived from observed or given figures under the assumption the sentence states"
	case "sampled":
		return "from a sample of the topic's records, each key routed exactly as Flink routes it"
	case "observed":
		return "observed from the running job"
	}
	return kind
}

func subtaskTitle(r GridRow) string {
	s := "subtask " + strconv.Itoa(r.Subtask) + " · key groups " + r.KeyGroups
	if r.Busiest {
		s += " · busiest"
	}
	if r.Idle {
		s += " · idle: no partitions"
	}
	return s
}

func num(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }

func pct(v float64) string { return strconv.FormatFloat(v, 'f', 3, 64) + "%" }

// ariaInvalid spells the aria-invalid attribute: a bare attribute would
// mean "false" to assistive technology.
func ariaInvalid(bad bool) string {
	if bad {
		return "true"
	}
	return "false"
}

func rowClass(r GridRow) string {
	switch {
	case r.Idle && r.Highlight:
		return "idle hl"
	case r.Idle:
		return "idle"
	case r.Highlight:
		return "hl"
	}
	return ""
}

func stClass(r GridRow) string {
	if r.Busiest {
		return "st busiest"
	}
	return "st"
}

// jsonStrings writes ss as a JSON array, for a data attribute (templ
// escapes it as any attribute value).
func jsonStrings(ss []string) string {
	b, err := json.Marshal(ss)
	if err != nil {
		return "[]"
	}
	return string(b)
}

func colorBy(byRate bool) string {
	if byRate {
		return "rate"
	}
	return "topic"
}
