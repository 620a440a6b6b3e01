package main

import (
	"bytes"
	"os"
	"regexp"
	"strings"
	"testing"
)

// TestMain lets the test binary act as the broker child: run re-executes
// os.Executable with -serve.
func TestMain(m *testing.M) {
	if len(os.Args) > 1 && os.Args[1] == "-serve" {
		if err := run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr); err != nil {
			os.Stderr.WriteString(err.Error() + "\n")
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// TestRun reads a small topic the three ways through the child broker
// (run fails unless every side reads every record, the summary included)
// and checks that each side's figures and the verdict are printed.
func TestRun(t *testing.T) {
	var out, errOut bytes.Buffer
	if err := run([]string{"-rounds", "2", "-records", "4000", "-partitions", "2"}, strings.NewReader(""), &out, &errOut); err != nil {
		t.Fatalf("run: %v\nstderr: %s", err, errOut.String())
	}
	for _, side := range []string{"plain", "sample", "keyed"} {
		re := regexp.MustCompile(`(?m)^  ` + side + ` +[0-9.]+ / [0-9.]+ M records/s   reader CPU [0-9]+ / [0-9]+ ns/record$`)
		if !re.MatchString(out.String()) {
			t.Errorf("no figures for %s in:\n%s", side, out.String())
		}
	}
	if !regexp.MustCompile(`sample ÷ plain [0-9.]+× \(goal ≥ 0\.9×\): (met|NOT met)`).MatchString(out.String()) {
		t.Errorf("no verdict in:\n%s", out.String())
	}
}

// TestRunRefusesBadFlags names what is wrong with the flags.
func TestRunRefusesBadFlags(t *testing.T) {
	for _, args := range [][]string{{"-rounds", "0"}, {"-records", "10", "-partitions", "3"}, {"extra"}} {
		var out, errOut bytes.Buffer
		if err := run(args, strings.NewReader(""), &out, &errOut); err == nil {
			t.Errorf("run %q: no error", args)
		}
	}
}
