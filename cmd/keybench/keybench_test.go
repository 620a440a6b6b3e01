package main

import (
	"os"
	"strings"
	"testing"

	gocmp "github.com/google/go-cmp/cmp"
)

func TestParseJavaVersion(t *testing.T) {
	for _, tc := range []struct {
		out, version, runtime string
		feature               int
	}{
		{"openjdk version \"17.0.15\" 2025-04-15\nOpenJDK Runtime Environment (build 17.0.15+6-Debian-1deb12u1)\nOpenJDK 64-Bit Server VM (build 17.0.15+6-Debian-1deb12u1, mixed mode, sharing)\n",
			"17.0.15", "OpenJDK Runtime Environment (build 17.0.15+6-Debian-1deb12u1)", 17},
		{"openjdk version \"25.0.3\" 2026-04-21 LTS\nOpenJDK Runtime Environment Temurin-25.0.3+9 (build 25.0.3+9-LTS)\n",
			"25.0.3", "OpenJDK Runtime Environment Temurin-25.0.3+9 (build 25.0.3+9-LTS)", 25},
		{"Picked up JAVA_TOOL_OPTIONS: -Xmx1g\nopenjdk version \"26-ea\" 2026-03-17\nOpenJDK Runtime Environment (build 26-ea+5)\n",
			"26-ea", "OpenJDK Runtime Environment (build 26-ea+5)", 26},
		{"java version \"1.8.0_392\"\nJava(TM) SE Runtime Environment (build 1.8.0_392-b08)\n",
			"1.8.0_392", "Java(TM) SE Runtime Environment (build 1.8.0_392-b08)", 8},
	} {
		v, f, rt, err := parseJavaVersion(tc.out)
		if err != nil || v != tc.version || f != tc.feature || rt != tc.runtime {
			t.Errorf("parseJavaVersion(%q) = %q, %d, %q, %v, want %q, %d, %q", tc.out, v, f, rt, err, tc.version, tc.feature, tc.runtime)
		}
	}
	for _, bad := range []string{"", "bash: java: not found", `openjdk version "x.1"`} {
		if _, _, _, err := parseJavaVersion(bad); err == nil {
			t.Errorf("parseJavaVersion(%q): no error", bad)
		}
	}
}

func TestPickJVMs(t *testing.T) {
	j17 := jvm{path: "/usr/bin/java", real: "/usr/lib/jvm/java-17-openjdk-amd64/bin/java", feature: 17}
	j17b := jvm{path: "/usr/lib/jvm/openjdk-17/bin/java", real: "/usr/lib/jvm/openjdk-17/bin/java", feature: 17}
	j21 := jvm{path: "/usr/lib/jvm/java-21/bin/java", real: "/usr/lib/jvm/java-21/bin/java", feature: 21}
	j25 := jvm{path: "/usr/lib/jvm/temurin-25-jdk-amd64/bin/java", real: "/usr/lib/jvm/temurin-25-jdk-amd64/bin/java", feature: 25}
	for _, tc := range []struct {
		name        string
		found, want []jvm
	}{
		{"none", nil, nil},
		{"Debian 12: only 17", []jvm{j17, j17b}, []jvm{j17}},
		{"17 and 25", []jvm{j17, j25, j21}, []jvm{j17, j25}},
		{"newest first", []jvm{j25, j17b, j17}, []jvm{j17b, j25}},
		{"no 17", []jvm{j21, j25}, []jvm{j25}},
	} {
		if diff := gocmp.Diff(tc.want, pickJVMs(tc.found), gocmp.AllowUnexported(jvm{})); diff != "" {
			t.Errorf("%s (-want +got):\n%s", tc.name, diff)
		}
	}
}

func TestParseHarness(t *testing.T) {
	passes, sum, err := parseHarness([]byte("jvm Eclipse_Adoptium 25.0.3+9-LTS\npass 18.250\npass 19.000\nchecksum 16376739395\n"))
	if err != nil || sum != 16376739395 || !gocmp.Equal(passes, []float64{18.25, 19}) {
		t.Errorf("parseHarness = %v, %d, %v", passes, sum, err)
	}
	for _, bad := range []string{
		"pass 18.2\n",                    // no checksum
		"pass 18,2\nchecksum 1\n",        // a locale's decimal comma
		"pass 0\nchecksum 1\n",           // no time
		"pass 1\nchecksum -1\n",          // not a sum of key groups
		"Exception in thread \"main\"\n", // anything else
	} {
		if _, _, err := parseHarness([]byte(bad)); err == nil {
			t.Errorf("parseHarness(%q): no error", bad)
		}
	}
}

func TestSummarize(t *testing.T) {
	for _, tc := range []struct {
		in   []float64
		want stats
	}{
		{nil, stats{}},
		{[]float64{3}, stats{3, 3, 1}},
		{[]float64{5, 1, 3}, stats{1, 3, 3}},
		{[]float64{4, 1, 3, 2}, stats{1, 2.5, 4}},
	} {
		if got := summarize(tc.in); got != tc.want {
			t.Errorf("summarize(%v) = %+v, want %+v", tc.in, got, tc.want)
		}
	}
}

// TestBenchKeys: the keys are those of assign's
// BenchmarkKeyGroups1MStringKeys, and the file the JVM reads holds them
// one per line.
func TestBenchKeys(t *testing.T) {
	keys := benchKeys(30)
	for i, want := range map[int]string{0: "customer-a0", 1: "customer-xb1", 6: "customer-xxxxxxg6", 7: "customer-h7", 27: "customer-xxxxxxb27"} {
		if keys[i] != want {
			t.Errorf("key %d = %q, want %q", i, keys[i], want)
		}
	}
	file, err := writeKeys(keys)
	if err != nil {
		t.Fatal(err)
	}
	defer os.Remove(file)
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	if got := string(b); got != strings.Join(keys, "\n")+"\n" {
		t.Errorf("keys file = %q", got)
	}
}

func TestReportVerdicts(t *testing.T) {
	r := report{
		keys: 1000, maxP: 32768, rounds: 1, passes: 3, procs: 2, load: [2]string{"0.1 0.2 0.3", "0.2 0.2 0.3"},
		single: stats{10, 11, 3}, before: stats{20, 21, 3}, bulk: stats{12, 12, 3}, sum: 42,
		jvms: []jvmResult{
			{jvm{path: "/usr/bin/java", version: "17.0.15", feature: 17}, stats{21, 22, 3}},
			{jvm{path: "/opt/jdk25/bin/java", version: "25.0.3", feature: 25}, stats{18, 20, 3}},
		},
	}
	var b strings.Builder
	r.write(&b)
	out := b.String()
	for _, want := range []string{
		"JVM anchor, the newest found: Flink 2.2.1 KeyGroupRangeAssignment.assignToKeyGroup, one thread, on Java 25.0.3",
		"one goroutine              goal ≤ 1.0× the JVM thread   anchor 18.0 / 20.0 ns/key   now 10.0 / 11.0 ns/key   ratio 0.55× (min 0.56×): met",
		"before (one multiply-add per byte, commit 0d90a98): 20.0 / 21.0 ns/key, ratio 1.05× (min 1.11×); now/before 0.52×",
		"bulk, 2 cores              goal ≤ 0.5× one JVM thread   anchor 18.0 / 20.0 ns/key   now 12.0 / 12.0 ns/key   ratio 0.60× (min 0.67×): NOT met",
		"against Java 17.0.15: 0.50× (min 0.48×)",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("report lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "note:") {
		t.Errorf("a Java 25 anchor needs no note:\n%s", out)
	}
}
