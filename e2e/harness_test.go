//go:build e2e

package e2e

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/skewscope/skewscope/assign"
)

// flinkLine is one Flink release line the tier runs against.
type flinkLine struct {
	Name          string // "1.20"
	Module        string // Maven module under flinkjob/
	ConnectorLine string // assign.ConnectorLine34 or assign.ConnectorLine5
}

var allLines = []flinkLine{
	{Name: "1.20", Module: "flink-1.20", ConnectorLine: assign.ConnectorLine34},
	{Name: "2.2", Module: "flink-2.2", ConnectorLine: assign.ConnectorLine5},
	{Name: "2.3", Module: "flink-2.3", ConnectorLine: assign.ConnectorLine5},
}

// selectedLines honours SKEWSCOPE_E2E_LINES ("1.20,2.2,2.3" by default).
func selectedLines(t *testing.T) []flinkLine {
	want := os.Getenv("SKEWSCOPE_E2E_LINES")
	if want == "" {
		return allLines
	}
	var out []flinkLine
	for _, w := range strings.Split(want, ",") {
		found := false
		for _, l := range allLines {
			if l.Name == strings.TrimSpace(w) {
				out = append(out, l)
				found = true
			}
		}
		if !found {
			var known []string
			for _, l := range allLines {
				known = append(known, l.Name)
			}
			t.Fatalf("SKEWSCOPE_E2E_LINES names unknown line %q; known: %s", w, strings.Join(known, ", "))
		}
	}
	return out
}

const flinkjobDir = "flinkjob"

var (
	buildOnce sync.Once
	buildErr  error
)

// requireTools fails (never skips) when java or mvn is missing.
func requireTools(t *testing.T) {
	t.Helper()
	var missing []string
	for _, tool := range []string{"java", "mvn"} {
		if _, err := exec.LookPath(tool); err != nil {
			missing = append(missing, tool)
		}
	}
	if len(missing) > 0 {
		t.Fatalf("the e2e tier needs %s on PATH (Java 17+ and Maven 3.8+; on Debian: apt-get install openjdk-17-jdk-headless maven)", strings.Join(missing, " and "))
	}
}

// buildJob compiles flinkjob/ and writes each module's classpath, once per
// test binary: offline first, online when the local repository lacks an
// artifact.
func buildJob(t *testing.T) {
	t.Helper()
	requireTools(t)
	buildOnce.Do(func() {
		extra := strings.Fields(os.Getenv("SKEWSCOPE_E2E_MAVEN_ARGS"))
		run := func(offline bool) (string, error) {
			args := []string{"-q", "-B", "-Dstyle.color=never"}
			if offline {
				args = append(args, "-o")
			}
			args = append(args, extra...)
			args = append(args, "compile", "dependency:build-classpath")
			cmd := exec.Command("mvn", args...)
			cmd.Dir = flinkjobDir
			var out bytes.Buffer
			cmd.Stdout, cmd.Stderr = &out, &out
			err := cmd.Run()
			return out.String(), err
		}
		start := time.Now()
		out, err := run(true)
		mode := "offline"
		if err != nil {
			t.Logf("offline Maven build failed, retrying online (first run downloads dependencies): %s", tail(out, 5))
			out, err = run(false)
			mode = "online"
		}
		if err != nil {
			buildErr = fmt.Errorf("mvn compile dependency:build-classpath in %s: %v\n%s", flinkjobDir, err, tail(out, 40))
			return
		}
		t.Logf("Maven build (%s) took %s", mode, time.Since(start).Round(100*time.Millisecond))
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
}

// classpath is module's target/classes plus its dependency classpath.
func classpath(t *testing.T, module string) string {
	t.Helper()
	dir, err := filepath.Abs(filepath.Join(flinkjobDir, module))
	if err != nil {
		t.Fatal(err)
	}
	cp, err := os.ReadFile(filepath.Join(dir, "target", "classpath.txt"))
	if err != nil {
		t.Fatalf("read classpath of %s: %v", module, err)
	}
	return filepath.Join(dir, "target", "classes") + string(os.PathListSeparator) + strings.TrimSpace(string(cp))
}

// workDir is a temp directory kept (and named in the log) when t fails.
func workDir(t *testing.T, prefix string) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "skewscope-e2e-"+prefix+"-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if t.Failed() || os.Getenv("SKEWSCOPE_E2E_KEEP") != "" {
			t.Logf("kept work directory %s", dir)
			return
		}
		os.RemoveAll(dir)
	})
	return dir
}

// javaProc is a child JVM whose stdout is a line protocol.
type javaProc struct {
	name    string
	cmd     *exec.Cmd
	stdin   io.WriteCloser
	lines   chan string
	logs    []string // files whose tails to print on failure
	exited  chan struct{}
	waitErr error
	mu      sync.Mutex // serialises commands
}

// startJava runs `java jvmArgs -cp cp main args...` in dir, its stderr to
// dir/<name>.stderr, and registers a cleanup that stops it ("quit", then
// closing stdin, then a kill after stopWait) and prints log tails if t
// failed.
func startJava(t *testing.T, name, dir, cp, main string, jvmArgs []string, logs []string, args ...string) *javaProc {
	t.Helper()
	all := append([]string{}, jvmArgs...)
	all = append(all, "-cp", cp, main)
	all = append(all, args...)
	cmd := exec.Command("java", all...)
	cmd.Dir = dir
	// The JVM dies with the test binary even if cleanup never runs.
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	stderrPath := filepath.Join(dir, name+".stderr")
	stderr, err := os.Create(stderrPath)
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	p := &javaProc{name: name, cmd: cmd, stdin: stdin, lines: make(chan string, 1024), logs: append([]string{stderrPath}, logs...), exited: make(chan struct{})}
	if err := cmd.Start(); err != nil {
		t.Fatalf("start %s: %v", name, err)
	}
	go func() {
		sc := bufio.NewScanner(stdout)
		sc.Buffer(make([]byte, 64<<10), 4<<20)
		for sc.Scan() {
			p.lines <- sc.Text()
		}
		close(p.lines)
	}()
	go func() {
		p.waitErr = cmd.Wait()
		stderr.Close()
		close(p.exited)
	}()
	t.Cleanup(func() {
		p.stop(t, 90*time.Second)
		if t.Failed() {
			p.dumpLogs(t)
		}
	})
	return p
}

// stop asks the program to quit and waits; it kills after wait.
func (p *javaProc) stop(t *testing.T, wait time.Duration) {
	select {
	case <-p.exited:
		return
	default:
	}
	start := time.Now()
	io.WriteString(p.stdin, "quit\n")
	p.stdin.Close()
	select {
	case <-p.exited:
		t.Logf("%s stopped in %s", p.name, time.Since(start).Round(100*time.Millisecond))
	case <-time.After(wait):
		t.Errorf("%s did not stop within %s; killing it", p.name, wait)
		p.cmd.Process.Kill()
		<-p.exited
	}
}

func (p *javaProc) dumpLogs(t *testing.T) {
	for _, f := range p.logs {
		b, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		t.Logf("---- tail of %s ----\n%s", f, tail(string(b), 60))
	}
}

// expect reads stdout lines until one starts with prefix and returns the
// rest of that line.
func (p *javaProc) expect(prefix string, timeout time.Duration) (string, error) {
	deadline := time.After(timeout)
	for {
		select {
		case l, ok := <-p.lines:
			if !ok {
				<-p.exited
				return "", fmt.Errorf("%s exited (%v) before printing %q", p.name, p.waitErr, prefix)
			}
			if strings.HasPrefix(l, prefix) {
				return strings.TrimPrefix(l, prefix), nil
			}
		case <-deadline:
			return "", fmt.Errorf("%s printed no %q within %s", p.name, prefix, timeout)
		}
	}
}

// command sends one control line and returns the reply after "OK".
func (p *javaProc) command(timeout time.Duration, verb string, kv ...string) (string, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	var b strings.Builder
	b.WriteString(verb)
	for i := 0; i+1 < len(kv); i += 2 {
		fmt.Fprintf(&b, " %s=%s", kv[i], url.QueryEscape(kv[i+1]))
	}
	b.WriteByte('\n')
	if _, err := io.WriteString(p.stdin, b.String()); err != nil {
		return "", fmt.Errorf("%s: send %q: %v", p.name, verb, err)
	}
	deadline := time.After(timeout)
	for {
		select {
		case l, ok := <-p.lines:
			if !ok {
				return "", fmt.Errorf("%s exited while running %q", p.name, verb)
			}
			switch {
			case l == "OK" || strings.HasPrefix(l, "OK "):
				return strings.TrimSpace(strings.TrimPrefix(l, "OK")), nil
			case strings.HasPrefix(l, "ERR "):
				return "", fmt.Errorf("%s %s: %s", p.name, verb, strings.TrimPrefix(l, "ERR "))
			}
		case <-deadline:
			return "", fmt.Errorf("%s: no reply to %q within %s", p.name, verb, timeout)
		}
	}
}

func tail(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// kafkaBroker is a running skewscope.e2e.KafkaBroker.
type kafkaBroker struct {
	proc      *javaProc
	Bootstrap string
}

// startKafka starts the broker; it tries up to three times, since the
// launcher picks its free ports before Kafka binds them.
func startKafka(t *testing.T) *kafkaBroker {
	t.Helper()
	var errs []string
	for attempt := 1; attempt <= 3; attempt++ {
		dir := workDir(t, "kafka")
		logFile := filepath.Join(dir, "kafka-broker.log")
		start := time.Now()
		p := startJava(t, "kafka-broker", dir, classpath(t, "broker"), "skewscope.e2e.KafkaBroker",
			[]string{"-Xms256m", "-Xmx1g", "-XX:+UseSerialGC", "-Dlog.file=" + logFile}, []string{logFile}, dir)
		bs, err := p.expect("KAFKA_BOOTSTRAP=", 120*time.Second)
		if err == nil {
			_, err = p.expect("READY", 30*time.Second)
		}
		if err == nil {
			t.Logf("Kafka broker (KRaft) at %s, ready in %s; logs in %s", bs, time.Since(start).Round(100*time.Millisecond), dir)
			return &kafkaBroker{proc: p, Bootstrap: bs}
		}
		p.stop(t, 30*time.Second)
		p.dumpLogs(t)
		errs = append(errs, fmt.Sprintf("attempt %d: %v (logs in %s)", attempt, err, dir))
	}
	t.Fatalf("kafka broker did not start: %s", strings.Join(errs, "; "))
	return nil
}

// flinkCluster is a running skewscope.e2e.FlinkE2E.
type flinkCluster struct {
	proc      *javaProc
	Line      flinkLine
	Version   string
	Scheduler string // "default" or "adaptive"
	REST      *restClient
	Dir       string
}

// startFlink starts a MiniCluster with Flink's default scheduler.
func startFlink(t *testing.T, line flinkLine, bootstrap string) *flinkCluster {
	t.Helper()
	return startFlinkScheduler(t, line, bootstrap, "default")
}

// startFlinkScheduler starts a MiniCluster (16 slots) with the given
// scheduler, "default" or "adaptive" (see FlinkE2E's settings); the
// cluster stops when t's cleanups run.
func startFlinkScheduler(t *testing.T, line flinkLine, bootstrap, scheduler string) *flinkCluster {
	t.Helper()
	name := "flink-" + line.Name
	if scheduler != "default" {
		name += "-" + scheduler
	}
	dir := workDir(t, name)
	logFile := filepath.Join(dir, "flink.log")
	start := time.Now()
	p := startJava(t, name, dir, classpath(t, line.Module), "skewscope.e2e.FlinkE2E",
		[]string{"-Xms512m", "-Xmx3g", "-Dlog.file=" + logFile}, []string{logFile}, dir, bootstrap, "16", scheduler)
	ver, err := p.expect("FLINK_VERSION=", 120*time.Second)
	var rest string
	if err == nil {
		rest, err = p.expect("REST_URL=", 60*time.Second)
	}
	var sched string
	if err == nil {
		sched, err = p.expect("SCHEDULER=", 30*time.Second)
	}
	if err == nil && sched != scheduler {
		err = fmt.Errorf("started with scheduler %q, want %q", sched, scheduler)
	}
	if err == nil {
		_, err = p.expect("READY", 30*time.Second)
	}
	if err != nil {
		t.Fatalf("flink %s (%s scheduler): %v", line.Name, scheduler, err)
	}
	rc, err := newREST(rest)
	if err != nil {
		t.Fatalf("flink %s: REST client: %v", line.Name, err)
	}
	t.Logf("Flink %s MiniCluster (%s scheduler), REST at %s, ready in %s; logs in %s", ver, scheduler, rest, time.Since(start).Round(100*time.Millisecond), dir)
	return &flinkCluster{proc: p, Line: line, Version: ver, Scheduler: scheduler, REST: rc, Dir: dir}
}

// jobSpec is one submit command.
type jobSpec struct {
	Name      string
	Topics    []string
	Out       string
	Group     string
	SourceP   int
	KeyedP    int
	MaxP      int    // 0: Flink's default
	Savepoint string // "": fresh start
	// Event time (all zero: no watermarks, the job's default). Watermarks
	// "bounded" gives the source forBoundedOutOfOrderness(BoundMs) on the
	// Kafka record timestamp, withIdleness(IdleMs) when IdleMs > 0 and
	// withWatermarkAlignment(AlignGroup, AlignDriftMs, AlignUpdateMs) when
	// AlignGroup is set.
	Watermarks                  string
	BoundMs, IdleMs             int64
	AlignGroup                  string
	AlignDriftMs, AlignUpdateMs int64
}

func (j jobSpec) String() string {
	m := "default"
	if j.MaxP > 0 {
		m = fmt.Sprint(j.MaxP)
	}
	s := fmt.Sprintf("job %q topics=%v sourceP=%d keyedP=%d maxP=%s", j.Name, j.Topics, j.SourceP, j.KeyedP, m)
	if j.Savepoint != "" {
		s += " from savepoint " + j.Savepoint
	}
	if j.Watermarks != "" {
		s += fmt.Sprintf(" watermarks=%s boundMs=%d idleMs=%d", j.Watermarks, j.BoundMs, j.IdleMs)
		if j.AlignGroup != "" {
			s += fmt.Sprintf(" alignGroup=%s alignDriftMs=%d alignUpdateMs=%d", j.AlignGroup, j.AlignDriftMs, j.AlignUpdateMs)
		}
	}
	return s
}

// submit submits j and waits until all its tasks run.
func (f *flinkCluster) submit(t *testing.T, j jobSpec) string {
	t.Helper()
	kv := []string{"name", j.Name, "topics", strings.Join(j.Topics, ","), "out", j.Out, "group", j.Group,
		"sourceP", fmt.Sprint(j.SourceP), "keyedP", fmt.Sprint(j.KeyedP)}
	if j.MaxP > 0 {
		kv = append(kv, "maxP", fmt.Sprint(j.MaxP))
	}
	if j.Savepoint != "" {
		kv = append(kv, "savepoint", j.Savepoint)
	}
	if j.Watermarks != "" {
		kv = append(kv, "watermarks", j.Watermarks, "boundMs", fmt.Sprint(j.BoundMs), "idleMs", fmt.Sprint(j.IdleMs))
		if j.AlignGroup != "" {
			kv = append(kv, "alignGroup", j.AlignGroup, "alignDriftMs", fmt.Sprint(j.AlignDriftMs), "alignUpdateMs", fmt.Sprint(j.AlignUpdateMs))
		}
	}
	reply, err := f.proc.command(120*time.Second, "submit", kv...)
	if err != nil {
		t.Fatalf("submit %s: %v", j, err)
	}
	id, ok := strings.CutPrefix(reply, "jobId=")
	if !ok {
		t.Fatalf("submit %s: unexpected reply %q", j, reply)
	}
	if err := f.REST.waitRunning(id, 120*time.Second); err != nil {
		t.Fatalf("%s (%s): %v", j, id, err)
	}
	return id
}

// layoutString prints subtask lists one per line.
func layoutString(subtasks [][]assign.TopicPartition) string {
	var b strings.Builder
	for i, l := range subtasks {
		ids := make([]string, len(l))
		for k, tp := range l {
			ids[k] = tp.SplitID()
		}
		fmt.Fprintf(&b, "\n    subtask %2d: [%s]", i, strings.Join(ids, " "))
	}
	return b.String()
}

// sortedLayout copies lists with each sorted by (topic, partition).
func sortedLayout(subtasks [][]assign.TopicPartition, p int) [][]assign.TopicPartition {
	out := make([][]assign.TopicPartition, p)
	for i := 0; i < p && i < len(subtasks); i++ {
		l := append([]assign.TopicPartition(nil), subtasks[i]...)
		sort.Slice(l, func(a, b int) bool {
			if l[a].Topic != l[b].Topic {
				return l[a].Topic < l[b].Topic
			}
			return l[a].Partition < l[b].Partition
		})
		out[i] = l
	}
	return out
}

func sameLayout(a, b [][]assign.TopicPartition) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if len(a[i]) != len(b[i]) {
			return false
		}
		for k := range a[i] {
			if a[i][k] != b[i][k] {
				return false
			}
		}
	}
	return true
}
