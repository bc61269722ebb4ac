package main

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"github.com/yukart/candec/internal/cmdkit/cli"
)

// TestDemoCommand: `candec demo` works from a clone with nothing else:
// it finds the test data from cmd/candec too, and with its output not a
// terminal prints summary lines.
func TestDemoCommand(t *testing.T) {
	var out, stderr bytes.Buffer
	if err := run(context.Background(), cli.Env{Stdin: nil, Stdout: &out, Stderr: &stderr}, []string{"demo", "--duration", "1500ms"}); err != nil {
		t.Fatalf("demo: %v\n%s", err, stderr.String())
	}
	if !strings.Contains(out.String(), "(the embedded broker)") || !strings.Contains(out.String(), "decoder offline") {
		t.Fatalf("demo output lacks the embedded broker or the final offline:\n%s", out.String())
	}
	err := run(context.Background(), cli.Env{Stdin: nil, Stdout: &out, Stderr: &stderr}, []string{"demo", "--capture", "no/such.log"})
	if err == nil || !strings.Contains(err.Error(), "no/such.log") {
		t.Fatalf("missing capture: got %v; want an error naming it", err)
	}
}

// TestDemoBadInput: out-of-range flags and an unreachable broker are an
// error and a non-zero exit, not a demo of "decoder not yet online".
func TestDemoBadInput(t *testing.T) {
	url := unreachableURL(t)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--speed", "0"}, "demo: --speed must be between 0.001 and 1000, got 0"},
		{[]string{"--speed", "1e-300"}, "demo: --speed must be between 0.001 and 1000, got 1e-300"},
		{[]string{"--duration", "-1s"}, "must not be negative, got -1s"},
		{[]string{"--duration", "soon"}, "want a duration such as 30s, or auto"},
		{[]string{"--connect-timeout", "0"}, "demo: --connect-timeout must be between 1ms and 5m0s, got 0s"},
		{[]string{"--prefix", "a/#"}, `prefix "a/#" must be topic levels without wildcards`},
		{[]string{"--broker", url, "--connect-timeout", "300ms"}, "demo: no connection to " + url + " within 300ms"},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			var out bytes.Buffer
			err := run(context.Background(), cli.Env{Stdin: nil, Stdout: &out, Stderr: &bytes.Buffer{}}, append([]string{"demo", "--duration", "5s"}, tc.args...))
			if err == nil || cli.ExitCode(err) == 0 || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("got %v (exit %d), want an error containing %q", err, cli.ExitCode(err), tc.want)
			}
			if out.Len() != 0 {
				t.Errorf("printed %q, want nothing", out.String())
			}
		})
	}
}

// TestDemoHelp: -h gives --duration a real default, not a sentinel.
func TestDemoHelp(t *testing.T) {
	var stdout bytes.Buffer // the help goes to stdout, exit status 0
	if err := run(context.Background(), cli.Env{Stdin: nil, Stdout: &stdout, Stderr: &bytes.Buffer{}}, []string{"demo", "-h"}); err != nil {
		t.Fatalf("demo -h: %v, want exit 0", err)
	}
	help := stdout.String()
	if strings.Contains(help, "-1ns") || !strings.Contains(help, "(default auto)") || !strings.Contains(help, "(default candec-demo with --broker") {
		t.Errorf("help:\n%s\nwant --duration's default auto and --prefix's default, no -1ns", help)
	}
}

// TestDemoSaysWhyItStops: with its output not a terminal and no
// --duration, the demo says on standard error that it stops after 10s,
// and how to run it longer; with --duration it says nothing of it.
func TestDemoSaysWhyItStops(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want bool
	}{
		{nil, true},
		{[]string{"--duration", "1s"}, false},
	} {
		// The context ends the demo before its 10s.
		ctx, cancel := context.WithTimeout(context.Background(), 1500*time.Millisecond)
		var stdout, stderr bytes.Buffer
		err := run(ctx, cli.Env{Stdin: nil, Stdout: &stdout, Stderr: &stderr}, append([]string{"demo"}, tc.args...))
		cancel()
		if err != nil {
			t.Fatalf("demo %v: %v\n%s", tc.args, err, stderr.String())
		}
		const msg = "demo: standard output is not a terminal: stopping after 10s (--duration 0 runs until Ctrl-C, --duration D for D)\n"
		if got := strings.Contains(stderr.String(), msg); got != tc.want {
			t.Errorf("demo %v: stderr %q: got the reason %v, want %v", tc.args, stderr.String(), got, tc.want)
		}
	}
}
