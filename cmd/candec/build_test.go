package main

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/yukart/candec/internal/cmdkit/cli"
)

// carCommands are the commands of the car's binary (cmd/candec-car):
// what runs on the car, and nothing of the developer's lab.
var carCommands = []string{"run", "decode", "convert", "dbc", "replay", "watch", "generate", "version"}

// usageList returns the commands that 'candec -h' of the table cmds
// lists.
func usageList(t *testing.T, cmds []cli.Command) []string {
	t.Helper()
	var out strings.Builder
	if err := cli.Execute(context.Background(), cli.Env{Stdin: strings.NewReader(""), Stdout: &out, Stderr: &strings.Builder{}}, cmds, []string{"-h"}); err != nil {
		t.Fatal(err)
	}
	_, list, _ := strings.Cut(out.String(), "Commands:\n")
	list, _, _ = strings.Cut(list, "\n\n")
	var got []string
	for _, line := range strings.Split(list, "\n") {
		if f := strings.Fields(line); len(f) > 0 {
			got = append(got, f[0])
		}
	}
	return got
}

// TestBuildCommands: 'candec -h' lists every command of the developer's
// binary, in the table's order, and the car's binary's table (cli.Car)
// exactly carCommands, each the same entry as the developer's; a
// developer's command is unknown to the car's binary (exit status 2).
func TestBuildCommands(t *testing.T) {
	var want []string
	for _, c := range commands {
		want = append(want, c.Name)
	}
	if got := usageList(t, commands); !slices.Equal(got, want) {
		t.Errorf("candec -h lists %v, want %v", got, want)
	}
	if got := usageList(t, cli.Car); !slices.Equal(got, carCommands) {
		t.Errorf("the car's candec -h lists %v, want %v", got, carCommands)
	}
	for _, c := range cli.Car {
		if !slices.ContainsFunc(commands, func(d cli.Command) bool { return d.Name == c.Name && d.Summary == c.Summary }) {
			t.Errorf("the car's %s is not the developer's binary's entry", c.Name)
		}
	}
	for _, c := range commands {
		if !slices.Contains(carCommands, c.Name) {
			var out strings.Builder
			err := cli.Execute(context.Background(), cli.Env{Stdin: strings.NewReader(""), Stdout: &out, Stderr: &strings.Builder{}}, cli.Car, []string{c.Name})
			if cli.ExitCode(err) != 2 || err == nil || !strings.Contains(err.Error(), "unknown command") || out.Len() > 0 {
				t.Errorf("the car's candec %s: got %v (status %d), output %q; want status 2, unknown command, no output", c.Name, err, cli.ExitCode(err), out.String())
			}
		}
	}
}

// TestBuildDecodeFormats: decode's outputs (--format json, csv, parquet,
// --out-dir) all work in the developer's binary, which links the
// Parquet row; the car's refusal of it is internal/cmdkit/cli's
// TestCarDecodeFormats.
func TestBuildDecodeFormats(t *testing.T) {
	dir := t.TempDir()
	capture := filepath.Join(dir, "idle.log")
	data, err := os.ReadFile(idleLog)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.SplitAfterN(string(data), "\n", 201)
	if err := os.WriteFile(capture, []byte(strings.Join(lines[:200], "")), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		args []string
		out  string
	}{
		{"json", []string{"--format", "json", "-o", filepath.Join(dir, "o.jsonl")}, "o.jsonl"},
		{"csv", []string{"--format", "csv", "-o", filepath.Join(dir, "o.csv")}, "o.csv"},
		{"parquet", []string{"--format", "parquet", "-o", filepath.Join(dir, "o.parquet")}, "o.parquet"},
		{"lake", []string{"--out-dir", filepath.Join(dir, "lake")}, "lake"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			args := append(append([]string{"decode", "--dbc", yukartDBC}, tt.args...), capture)
			err := run(context.Background(), cli.Env{Stdin: strings.NewReader(""), Stdout: &strings.Builder{}, Stderr: &strings.Builder{}}, args)
			if _, statErr := os.Stat(filepath.Join(dir, tt.out)); err != nil || statErr != nil {
				t.Errorf("candec %s: got %v (%v), want %s written", strings.Join(args, " "), err, statErr, tt.out)
			}
		})
	}
}
