package cli

import (
	"bytes"
	"context"
	"os"
	"strings"
	"testing"
)

// TestHelpAndFlagErrors: help exits 0 and shows the command's flags on
// stdout; a flag error is one line on stderr, once, with a pointer to -h
// and no usage dump.
func TestHelpAndFlagErrors(t *testing.T) {
	for _, c := range []struct {
		args            []string
		code            int // 0: no error
		wantOut, notOut string
		wantErr         string // substring of the error
		wantStderrEmpty bool
	}{
		{args: []string{"decode", "-h"}, wantOut: "Usage: candec decode", wantStderrEmpty: true},
		{args: []string{"decode", "--help"}, wantOut: "-skip-invalid", wantStderrEmpty: true},
		{args: []string{"help", "generate"}, wantOut: `(default "testdata/yukart.dbc")`, notOut: "Commands:", wantStderrEmpty: true},
		{args: []string{"generate", "-h"}, wantOut: "(default 20s)", notOut: "show this help", wantStderrEmpty: true},
		{args: []string{"dbc", "-h"}, wantOut: "Usage: candec dbc FILE", notOut: "Flags:", wantStderrEmpty: true},
		{args: []string{"help"}, wantOut: "Commands:", wantStderrEmpty: true},
		{args: []string{"help", "nope"}, code: 2, wantErr: `help: unknown command "nope"`},
		{args: []string{"nope"}, code: 2, wantErr: `unknown command "nope"`},
		{args: []string{"decode", "--bogus"}, code: 2, wantErr: "decode: flag provided but not defined: -bogus; see 'candec decode -h'", wantStderrEmpty: true},
		{args: []string{"generate", "--duration", "x"}, code: 2, wantErr: `generate: invalid value "x" for flag -duration`, wantStderrEmpty: true},
		{args: []string{"decode", "--dbc", "x.dbc", "capture.log", "-o", "out"}, code: 2, wantErr: "flags go before CAPTURE"},
		{args: []string{"dbc", "a.dbc", "--bogus"}, code: 2, wantErr: "flags go before FILE"},
		{args: []string{"version"}, wantOut: "\ngo go1.", wantStderrEmpty: true},
		{args: []string{"--version"}, wantOut: "candec ", wantStderrEmpty: true},
		{args: []string{"help"}, wantOut: "  version ", wantStderrEmpty: true},
		{args: []string{"version", "x"}, code: 2, wantErr: `version: unexpected argument "x"`},
	} {
		t.Run(strings.Join(c.args, " "), func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			err := run(context.Background(), Env{strings.NewReader(""), &stdout, &stderr}, c.args)
			if c.code == 0 {
				if err != nil {
					t.Fatalf("got %v, want exit status 0", err)
				}
			} else {
				if err == nil || ExitCode(err) != c.code || !strings.Contains(err.Error(), c.wantErr) {
					t.Fatalf("got %v (status %d), want status %d with %q", err, ExitCode(err), c.code, c.wantErr)
				}
				if strings.Contains(err.Error(), "\n") {
					t.Errorf("error is not one line: %q", err)
				}
			}
			if !strings.Contains(stdout.String(), c.wantOut) {
				t.Errorf("stdout lacks %q:\n%s", c.wantOut, stdout.String())
			}
			if c.notOut != "" && strings.Contains(stdout.String(), c.notOut) {
				t.Errorf("stdout has %q:\n%s", c.notOut, stdout.String())
			}
			if c.wantStderrEmpty && stderr.Len() != 0 {
				t.Errorf("stderr: got %q, want nothing (the error is returned once)", stderr.String())
			}
		})
	}
}

// TestStdoutWrapperKeepsTheFile: the check on standard output's writes
// hides no terminal: the commands that draw for a terminal (demo, decode's
// refusal to write Parquet to one) still find the file under it.
func TestStdoutWrapperKeepsTheFile(t *testing.T) {
	f, ok := FileOf(&stdoutWriter{w: os.Stderr})
	if !ok || f != os.Stderr {
		t.Errorf("fileOf(stdoutWriter{os.Stderr}) = %v, %v; want os.Stderr", f, ok)
	}
	if _, ok := FileOf(&stdoutWriter{w: &strings.Builder{}}); ok {
		t.Error("fileOf found a file under a strings.Builder")
	}
}
