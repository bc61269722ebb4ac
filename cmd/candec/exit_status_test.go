package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/yukart/candec/internal/cmdkit/cli"
)

// exitCase is what TestExitStatusEveryCommand runs for one command.
type exitCase struct {
	usage   []string // a wrong command line of this command (exit status 2), besides an unknown flag
	failure []string // a missing input (exit status 1); nil: the command reads nothing
	says    string   // what the failure's error says ("missing": the missing path)
	stdout  []string // a run that writes to standard output; nil: it writes nothing there but its help
}

// exitCases gives each command's cases. Every command of the commands
// list must have an entry: a new command fails TestExitStatusEveryCommand
// until its cases are written.
func exitCases(t *testing.T) map[string]exitCase {
	dir := t.TempDir()
	missing := func(name string) string { return filepath.Join(dir, "missing", name) }
	svg := filepath.Join(dir, "out.svg")
	m := "missing"
	return map[string]exitCase{
		"run":     {usage: []string{"extra"}, failure: []string{"--config", missing("candec.yaml")}, says: m},
		"demo":    {usage: []string{"extra"}, failure: []string{"--capture", missing("idle.log"), "--duration", "1s"}, says: m},
		"decode":  {usage: []string{"--dbc", yukartDBC}, failure: []string{"--dbc", yukartDBC, missing("idle.log")}, says: m, stdout: []string{"--dbc", yukartDBC, idleLog}},
		"convert": {usage: []string{idleLog}, failure: []string{missing("idle.log"), "-"}, says: m, stdout: []string{idleLog, "-"}},
		"dbc":     {usage: []string{}, failure: []string{missing("yukart.dbc")}, says: m, stdout: []string{yukartDBC}},
		"plot":    {usage: []string{"--dbc", yukartDBC, "--signals", "*", idleLog}, failure: []string{"--dbc", yukartDBC, "--signals", "*", "-o", svg, missing("idle.log")}, says: m},
		"tune":    {usage: []string{"--dbc", yukartDBC}, failure: []string{"--dbc", yukartDBC, missing("idle.log")}, says: m, stdout: []string{"--dbc", yukartDBC, idleLog}},
		"replay":  {usage: []string{}, failure: []string{"--broker", unreachableURL(t), missing("idle.log")}, says: m},
		// watch reads no file: its failure is a broker that does not answer.
		"watch":    {usage: []string{"--connect-timeout", "-1s"}, failure: []string{"--broker", unreachableURL(t), "--connect-timeout", "300ms"}, says: "no connection"},
		"generate": {usage: []string{"extra"}, failure: []string{"--dbc", missing("yukart.dbc")}, says: m, stdout: []string{"--dbc", yukartDBC, "--duration", "1s"}},
		"bench":    {usage: []string{"extra", "argument"}, failure: []string{"--scenarios", missing("scenarios.yaml")}, says: m},
		"ingest":   {usage: []string{"--dbc", yukartDBC}, failure: []string{"--dbc", missing("yukart.dbc"), "--out-dir", filepath.Join(dir, "lake")}, says: m},
		"version":  {usage: []string{"extra"}, stdout: []string{}}, // it reads nothing: it fails only on a write
		"campaign": {usage: []string{"nosuch"}, failure: []string{"sign", "--key", missing("key"), "--policy", missing("p.yaml"), "--version", "1", "--vehicles", "*", "--dbc", yukartDBC},
			says: m, stdout: []string{"keygen", "-o", filepath.Join(dir, "key")}},
	}
}

// TestExitStatusEveryCommand checks the exit-status table of 'candec -h'
// for every command of the commands list: -h is 0, an unknown flag and an
// extra argument are 2, a missing input is 1, and a run whose standard
// output is /dev/full (the help, and the command's own output where it
// has one) is 1 with the failed write named.
func TestExitStatusEveryCommand(t *testing.T) {
	cases := exitCases(t)
	for _, c := range commands {
		t.Run(c.Name, func(t *testing.T) {
			tc, ok := cases[c.Name]
			if !ok {
				t.Fatalf("no exit-status case for the command %q: add one to exitCases", c.Name)
			}
			check := func(args []string, stdout *os.File, want int, wantErr string) {
				t.Helper()
				var out strings.Builder
				e := cli.Env{Stdin: strings.NewReader(""), Stdout: &out, Stderr: &strings.Builder{}}
				if stdout != nil {
					e.Stdout = stdout
				}
				err := run(context.Background(), e, append([]string{c.Name}, args...))
				if got := cli.ExitCode(err); got != want {
					t.Fatalf("candec %s %s: exit status %d (%v), want %d", c.Name, strings.Join(args, " "), got, err, want)
				}
				if err != nil && !strings.Contains(err.Error(), wantErr) {
					t.Errorf("candec %s %s: got %q, want it to say %q", c.Name, strings.Join(args, " "), err, wantErr)
				}
			}
			check([]string{"-h"}, nil, 0, "")
			check([]string{"--no-such-flag"}, nil, 2, "-no-such-flag")
			check(tc.usage, nil, 2, "")
			if tc.failure != nil {
				check(tc.failure, nil, 1, tc.says)
			}
			full, err := os.OpenFile("/dev/full", os.O_WRONLY, 0)
			if err != nil {
				t.Skip("no /dev/full:", err)
			}
			defer full.Close()
			check([]string{"-h"}, full, 1, "no space left on device")
			if tc.stdout != nil {
				check(tc.stdout, full, 1, "no space left on device")
			}
		})
	}
}

// TestExitStatusTable: 'candec -h' shows the table, and the README has the
// same one.
func TestExitStatusTable(t *testing.T) {
	var out strings.Builder
	if err := run(context.Background(), cli.Env{Stdin: strings.NewReader(""), Stdout: &out, Stderr: &strings.Builder{}}, []string{"-h"}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "Exit status") {
		t.Errorf("candec -h lacks the exit-status table:\n%s", out.String())
	}
	readme, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split("Exit status", "\n")[1:] {
		code, what, _ := strings.Cut(strings.TrimSpace(line), "  ")
		row := "| " + code + " | " + what + " |"
		if !strings.Contains(string(readme), row) {
			t.Errorf("README lacks the row %q", row)
		}
	}
}

// TestOutputArgumentNamed: an output that is an input, or that lies in a
// missing directory, is named by the argument the user gave (-o, OUT,
// --svg) and its path, never by a temporary file, and an output that is
// an input is a usage error (2) in every command.
func TestOutputArgumentNamed(t *testing.T) {
	dir := t.TempDir()
	capture := filepath.Join(dir, "idle.log")
	data, err := os.ReadFile(idleLog)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(capture, data, 0o644); err != nil {
		t.Fatal(err)
	}
	svgCapture := filepath.Join(dir, "idle.svg") // a capture named like a picture
	dbcFile := filepath.Join(dir, "yukart.dbc")
	for name, from := range map[string]string{svgCapture: idleLog, dbcFile: yukartDBC} {
		data, err := os.ReadFile(from)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(name, data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	nowhere := filepath.Join(dir, "missing")
	for _, c := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"convert", capture, capture}, 2, "convert: OUT: outfile: the output is an input: " + capture},
		{[]string{"convert", capture, filepath.Join(nowhere, "o.log")}, 1, "convert: OUT: outfile: " + filepath.Join(nowhere, "o.log") + ": the directory " + nowhere + " does not exist"},
		{[]string{"tune", "--dbc", yukartDBC, "--svg", svgCapture, svgCapture}, 2, "tune: --svg: outfile: the output is an input: " + svgCapture},
		{[]string{"tune", "--dbc", yukartDBC, "--svg", filepath.Join(nowhere, "t.svg"), capture}, 1, "tune: --svg: outfile: " + filepath.Join(nowhere, "t.svg") + ": the directory"},
		{[]string{"decode", "--dbc", yukartDBC, "-o", capture, capture}, 2, "decode: -o: outfile: the output is an input"},
		{[]string{"decode", "--dbc", yukartDBC, "-o", filepath.Join(nowhere, "d.jsonl"), capture}, 1, "decode: -o: outfile: " + filepath.Join(nowhere, "d.jsonl") + ": the directory"},
		{[]string{"generate", "--dbc", dbcFile, "-o", dbcFile}, 2, "generate: -o: outfile: the output is an input"},
		{[]string{"plot", "--dbc", yukartDBC, "--signals", "MOT_Speed", "-o", filepath.Join(nowhere, "p.svg"), capture}, 1, "plot: -o: outfile: " + filepath.Join(nowhere, "p.svg") + ": the directory"},
	} {
		t.Run(strings.Join(c.args[:1], " "), func(t *testing.T) {
			err := run(context.Background(), cli.Env{Stdin: strings.NewReader(""), Stdout: &strings.Builder{}, Stderr: &strings.Builder{}}, c.args)
			if cli.ExitCode(err) != c.code || err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("candec %s: got %v (status %d), want status %d with %q", strings.Join(c.args, " "), err, cli.ExitCode(err), c.code, c.want)
			}
			if strings.Contains(err.Error(), "/.") {
				t.Errorf("the error names a temporary file: %q", err)
			}
		})
	}
}
