package main

import (
	"context"
	"errors"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// TestStartStepGivesWayToCancel: a start-up step that does not return is
// left behind as soon as the context is done, with an error naming it;
// what it returns later is undone.
func TestStartStepGivesWayToCancel(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	started, release := make(chan struct{}), make(chan struct{})
	undone := make(chan int, 1)
	errc := make(chan error, 1)
	go func() {
		_, err := startStep(ctx, "starting the example", func() (int, error) {
			close(started)
			<-release
			return 42, nil
		}, func(v int) { undone <- v })
		errc <- err
	}()
	<-started
	cancel()
	err := <-errc // the step is still blocked: only the cancel can end the wait
	if !errors.Is(err, errInterrupted) || !strings.Contains(err.Error(), "while starting the example") {
		t.Errorf("startStep after cancel = %v, want errInterrupted naming the step", err)
	}
	close(release)
	if v := <-undone; v != 42 {
		t.Errorf("undo got %d, want the late result 42", v)
	}
	if _, err := startStep(ctx, "listening", func() (int, error) { t.Error("step ran after cancel"); return 0, nil }, nil); !errors.Is(err, errInterrupted) {
		t.Errorf("startStep on a done context = %v, want errInterrupted", err)
	}
}

// cancelOn is a log writer that cancels a context when a line containing
// text is written: a signal arriving at that point of start-up.
type cancelOn struct {
	text   string
	cancel context.CancelFunc
	mu     sync.Mutex
	log    strings.Builder
}

func (c *cancelOn) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.log.Write(p)
	if strings.Contains(string(p), c.text) {
		c.cancel()
	}
	return len(p), nil
}

// TestRunInterruptedDuringStartup: when the signal context is done during
// start-up (here right after the configuration is read, before the sandbox
// starts), run returns an error saying so instead of starting the rest
// and serving.
func TestRunInterruptedDuringStartup(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	stderr := &cancelOn{text: "effective configuration", cancel: cancel}
	var stdout syncBuffer
	err := run(ctx, []string{"--listen", "127.0.0.1:0", "--log.level", "debug"}, noEnv, &stdout, stderr)
	if !errors.Is(err, errInterrupted) || err == nil || !strings.Contains(err.Error(), "start-up interrupted") {
		t.Errorf("run cancelled during start-up = %v, want an error saying start-up was interrupted", err)
	}
	if out := stdout.String(); strings.Contains(out, "http://") {
		t.Errorf("run cancelled during start-up printed its address: %q", out)
	}
	if strings.Contains(stderr.log.String(), "sandbox started") {
		t.Errorf("run cancelled before the sandbox started it anyway:\n%.2000s", stderr.log.String())
	}
}

// TestFIFOConfigRefused: the binary given a named pipe as --config.file
// (nothing ever writes to it) exits by itself with a message naming the
// flag, where it used to wait for a writer for ever, deaf to SIGTERM.
func TestFIFOConfigRefused(t *testing.T) {
	bin := buildDashboard(t)
	pipe := filepath.Join(t.TempDir(), "skewscope.yaml")
	if err := syscall.Mkfifo(pipe, 0o600); err != nil {
		t.Fatal(err)
	}
	var stderr syncBuffer
	cmd := exec.Command(bin, "--config.file="+pipe, "--listen=127.0.0.1:0")
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	var err error
	select {
	case err = <-done:
	case <-time.After(time.Minute): // generous: the refusal needs no waiting at all
		cmd.Process.Kill()
		<-done
		t.Fatalf("dashboard --config.file=<fifo> still running after a minute; stderr:\n%s", stderr.String())
	}
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != 1 {
		t.Errorf("dashboard --config.file=<fifo> exit = %v, want code 1", err)
	}
	if want := "--config.file: " + pipe + " is a named pipe (FIFO), not a regular file"; !strings.Contains(stderr.String(), want) {
		t.Errorf("stderr = %q, want it to contain %q", stderr.String(), want)
	}
}

// TestSIGTERMDuringStartup: the binary sent SIGTERM as soon as it has read
// its configuration (the sandbox then starting) ends: with the start-up
// interrupted message, or, if start-up won the race, through the graceful
// shutdown. It never goes on serving.
func TestSIGTERMDuringStartup(t *testing.T) {
	bin := buildDashboard(t)
	var stdout, stderr syncBuffer
	cmd := exec.Command(bin, "--listen=127.0.0.1:0", "--log.level=debug")
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	defer func() {
		if cmd.ProcessState == nil {
			cmd.Process.Kill()
			<-done
		}
	}()
	if !waitUntil(t, time.Minute, 5*time.Millisecond, func() bool { return strings.Contains(stderr.String(), "effective configuration") }) {
		t.Fatalf("no effective configuration line within a minute; stderr:\n%s", stderr.String())
	}
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	var err error
	select {
	case err = <-done:
	case <-time.After(time.Minute):
		t.Fatalf("dashboard still running a minute after SIGTERM during start-up; stderr:\n%.3000s", stderr.String())
	}
	log := stderr.String()
	var exit *exec.ExitError
	switch {
	case errors.As(err, &exit) && exit.ExitCode() == 1 && strings.Contains(log, "dashboard: start-up interrupted") && strings.Contains(log, "terminated"):
	case err == nil && strings.Contains(log, "msg=stopped"):
	default:
		t.Errorf("dashboard after SIGTERM during start-up: %v, want exit 1 saying start-up was interrupted (or 0 after a graceful stop); stderr:\n%.3000s", err, log)
	}
}
