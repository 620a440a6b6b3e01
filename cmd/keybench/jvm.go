package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// jvm is one java binary and the version it reports.
type jvm struct {
	path    string // as found, for messages
	real    string // symlinks resolved, to tell two names of one JDK apart
	version string // "17.0.15", "25.0.3"
	feature int    // 17, 25
	runtime string // the -version output's second line, "OpenJDK Runtime Environment Temurin-25.0.3+9 (...)"
}

func (j jvm) String() string { return fmt.Sprintf("Java %s (%s)", j.version, j.path) }

// versionRE matches the first line of java -version: openjdk version "25.0.3" 2026-04-21 LTS.
var versionRE = regexp.MustCompile(`version "([^"]+)"`)

// parseJavaVersion reads java -version's output: the version string, its
// feature release (8 for "1.8.0_392", 25 for "25.0.3" or "25-ea") and the
// runtime's line.
func parseJavaVersion(out string) (version string, feature int, runtime string, err error) {
	lines := strings.Split(strings.TrimSpace(out), "\n")
	i := slices.IndexFunc(lines, func(l string) bool { return versionRE.MatchString(l) })
	if i < 0 {
		return "", 0, "", fmt.Errorf("no version in %q", out)
	}
	version = versionRE.FindStringSubmatch(lines[i])[1]
	v := strings.TrimPrefix(version, "1.")
	end := strings.IndexFunc(v, func(r rune) bool { return r < '0' || r > '9' })
	if end < 0 {
		end = len(v)
	}
	feature, err = strconv.Atoi(v[:end])
	if err != nil {
		return "", 0, "", fmt.Errorf("version %q: no feature release", version)
	}
	if i+1 < len(lines) {
		runtime = strings.TrimSpace(lines[i+1])
	}
	return version, feature, runtime, nil
}

// describeJVMs runs java -version on each path.
func describeJVMs(ctx context.Context, paths []string) ([]jvm, error) {
	var out []jvm
	for _, p := range paths {
		j, err := describeJVM(ctx, p)
		if err != nil {
			return nil, err
		}
		out = append(out, j)
	}
	return out, nil
}

func describeJVM(ctx context.Context, path string) (jvm, error) {
	real, err := filepath.EvalSymlinks(path)
	if err != nil {
		return jvm{}, fmt.Errorf("java %s: %w", path, err)
	}
	b, err := exec.CommandContext(ctx, path, "-version").CombinedOutput()
	if err != nil {
		return jvm{}, fmt.Errorf("%s -version: %v: %s", path, err, b)
	}
	v, f, rt, err := parseJavaVersion(string(b))
	if err != nil {
		return jvm{}, fmt.Errorf("%s -version: %w", path, err)
	}
	return jvm{path: path, real: real, version: v, feature: f, runtime: rt}, nil
}

// findJVMs looks for java in $JAVA_HOME, on PATH and under /usr/lib/jvm
// and returns the one of Java 17 (first found) and the newest, or the
// newest alone when it is 17 or no 17 is there.
func findJVMs(ctx context.Context) ([]jvm, error) {
	var paths []string
	if h := os.Getenv("JAVA_HOME"); h != "" {
		paths = append(paths, filepath.Join(h, "bin", "java"))
	}
	if p, err := exec.LookPath("java"); err == nil {
		paths = append(paths, p)
	}
	glob, _ := filepath.Glob("/usr/lib/jvm/*/bin/java")
	paths = append(paths, glob...)
	var found []jvm
	seen := map[string]bool{}
	for _, p := range paths {
		if _, err := os.Stat(p); err != nil {
			continue
		}
		j, err := describeJVM(ctx, p)
		if err != nil || seen[j.real] {
			continue
		}
		seen[j.real] = true
		found = append(found, j)
	}
	picked := pickJVMs(found)
	if len(picked) == 0 {
		return nil, errors.New("no java found in $JAVA_HOME, on PATH or in /usr/lib/jvm (on Debian: apt-get install openjdk-17-jdk-headless)")
	}
	return picked, nil
}

// pickJVMs returns the first JVM of Java 17 and the newest (the first of
// the highest feature release), in that order, once each.
func pickJVMs(found []jvm) []jvm {
	if len(found) == 0 {
		return nil
	}
	newest := found[0]
	for _, j := range found[1:] {
		if j.feature > newest.feature {
			newest = j
		}
	}
	i := slices.IndexFunc(found, func(j jvm) bool { return j.feature == 17 })
	if i < 0 || found[i].real == newest.real {
		return []jvm{newest}
	}
	return []jvm{found[i], newest}
}

// buildHarness compiles the bench module and writes its classpath:
// offline first, online when the local repository lacks an artifact, as
// the e2e tier builds its modules.
func buildHarness(ctx context.Context, flinkjob string, stderr io.Writer) error {
	mvn := func(offline bool) ([]byte, error) {
		args := []string{"-q", "-B", "-Dstyle.color=never"}
		if offline {
			args = append(args, "-o")
		}
		args = append(args, "-f", filepath.Join("bench", "pom.xml"), "compile", "dependency:build-classpath")
		cmd := exec.CommandContext(ctx, "mvn", args...)
		cmd.Dir = flinkjob
		return cmd.CombinedOutput()
	}
	if _, err := exec.LookPath("mvn"); err != nil {
		return errors.New("mvn is not on PATH: the JVM side is built with Maven (on Debian: apt-get install maven)")
	}
	if _, err := mvn(true); err == nil {
		return nil
	}
	fmt.Fprintln(stderr, "keybench: the offline Maven build failed; building online (the first run downloads Flink 2.2.1's jars)")
	if out, err := mvn(false); err != nil {
		return fmt.Errorf("mvn -f bench/pom.xml compile dependency:build-classpath in %s: %v\n%s", flinkjob, err, out)
	}
	return nil
}

// harnessClasspath is the bench module's classes and dependencies.
func harnessClasspath(flinkjob string) (string, error) {
	dir, err := filepath.Abs(filepath.Join(flinkjob, "bench", "target"))
	if err != nil {
		return "", err
	}
	cp, err := os.ReadFile(filepath.Join(dir, "classpath.txt"))
	if err != nil {
		return "", fmt.Errorf("the Java harness is not built (run without -build=false): %w", err)
	}
	return filepath.Join(dir, "classes") + string(os.PathListSeparator) + strings.TrimSpace(string(cp)), nil
}

// runHarness runs KeyGroupBench on j over the keys in file and returns the
// ns per key of each timed pass and the key groups' sum.
func runHarness(ctx context.Context, j jvm, cp, file string, c config) ([]float64, int64, error) {
	cmd := exec.CommandContext(ctx, j.path, "-cp", cp, "skewscope.bench.KeyGroupBench", file,
		strconv.Itoa(c.maxP), strconv.Itoa(c.javaWarmup), strconv.Itoa(c.javaPasses))
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, 0, fmt.Errorf("%s KeyGroupBench: %v\n%s", j, err, stderr.Bytes())
	}
	passes, sum, err := parseHarness(out)
	if err != nil {
		return nil, 0, fmt.Errorf("%s KeyGroupBench: %w", j, err)
	}
	if len(passes) != c.javaPasses {
		return nil, 0, fmt.Errorf("%s KeyGroupBench: %d timed passes, want %d", j, len(passes), c.javaPasses)
	}
	return passes, sum, nil
}

// parseHarness reads KeyGroupBench's output: "pass <ns/key>" lines and
// one "checksum <sum>" line.
func parseHarness(out []byte) (passes []float64, sum int64, err error) {
	sum = -1
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) != 2 && !(len(f) == 3 && f[0] == "jvm") {
			return nil, 0, fmt.Errorf("unexpected line %q", sc.Text())
		}
		switch f[0] {
		case "jvm":
		case "pass":
			v, err := strconv.ParseFloat(f[1], 64)
			if err != nil || v <= 0 {
				return nil, 0, fmt.Errorf("bad pass line %q", sc.Text())
			}
			passes = append(passes, v)
		case "checksum":
			sum, err = strconv.ParseInt(f[1], 10, 64)
			if err != nil || sum < 0 {
				return nil, 0, fmt.Errorf("bad checksum line %q", sc.Text())
			}
		default:
			return nil, 0, fmt.Errorf("unexpected line %q", sc.Text())
		}
	}
	if sum < 0 {
		return nil, 0, errors.New("no checksum line")
	}
	return passes, sum, nil
}
