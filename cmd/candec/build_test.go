package main

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/yukart/candec/internal/outformat"
)

// carCommands are the commands of the car's build (-tags car): what runs
// on the car, and nothing of the developer's lab.
var carCommands = []string{"run", "decode", "convert", "dbc", "replay", "watch", "generate", "version"}

// siblingCommands are the commands that the lean build (-tags
// car,lean) hands to its sibling, candec-mqtt: their tests run in the
// car's build, whose binary the sibling is.
var siblingCommands = []string{"run", "replay", "watch"}

// inBuild says whether this build has the command called name, in
// process: in the lean build, not the sibling's.
func inBuild(name string) bool {
	c, ok := lookup(name)
	return ok && c.run != nil && !(leanBuild && slices.Contains(siblingCommands, name))
}

// inBuildArgs says whether this build has what args ask for: the
// command, and decode's output format or lake.
func inBuildArgs(args []string) bool {
	if len(args) == 0 || !inBuild(args[0]) {
		return false
	}
	for i, a := range args {
		if a == "--out-dir" {
			if _, ok := outformat.LakeFormat(); !ok {
				return false
			}
		}
		if a == "--format" && i+1 < len(args) {
			if _, err := outformat.Lookup(args[i+1]); err != nil {
				return false
			}
		}
	}
	return true
}

// needParquet skips a test of the Parquet outputs in a build without
// them (the car's).
func needParquet(t *testing.T) {
	t.Helper()
	if _, err := outformat.Lookup("parquet"); err != nil {
		t.Skipf("no Parquet in this build: %v", err)
	}
}

// checkAbsent checks that the command called name, left out of this
// build, says so when it is run or its help asked for: exit status 2,
// naming the build that has it.
func checkAbsent(t *testing.T, name string) {
	t.Helper()
	for _, args := range [][]string{{name}, {name, "-h"}, {"help", name}} {
		var out, errOut strings.Builder
		err := run(context.Background(), env{strings.NewReader(""), &out, &errOut}, args)
		if got := exitCode(err); got != exitUsage || err == nil || !strings.Contains(err.Error(), name+" is not in this build") || !strings.Contains(err.Error(), "developer's build") {
			t.Errorf("candec %s: got exit status %d (%v), want %d and %q", strings.Join(args, " "), got, err, exitUsage, name+" is not in this build (the car's); use the developer's build")
		}
		if out.Len() > 0 {
			t.Errorf("candec %s: got output %q, want none", strings.Join(args, " "), out.String())
		}
	}
}

// TestBuildCommands: 'candec -h' lists the commands of this build and no
// other: in the car's build (-tags car) exactly carCommands, in the
// developer's every command. A command left out says so.
func TestBuildCommands(t *testing.T) {
	var want []string
	for _, c := range commands {
		if !carBuild || slices.Contains(carCommands, c.name) {
			want = append(want, c.name)
		}
	}
	if carBuild && len(want) != len(carCommands) {
		t.Fatalf("the commands list has %v of the car's %v", want, carCommands)
	}
	var out strings.Builder
	if err := run(context.Background(), env{strings.NewReader(""), &out, &strings.Builder{}}, []string{"-h"}); err != nil {
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
	if !slices.Equal(got, want) {
		t.Errorf("candec -h lists %v, want %v", got, want)
	}
	for _, c := range commands {
		if !slices.Contains(want, c.name) {
			checkAbsent(t, c.name)
		}
	}
}

// TestBuildDecodeFormats: decode's Parquet outputs (--format parquet,
// --out-dir) work in the developer's build; the car's build has no
// Parquet, and says so with exit status 2 before it writes anything,
// while JSON and CSV work in both.
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
		name    string
		args    []string
		out     string // written by a build that has the format
		carWant string // the car build's error
	}{
		{"json", []string{"--format", "json", "-o", filepath.Join(dir, "o.jsonl")}, "o.jsonl", ""},
		{"csv", []string{"--format", "csv", "-o", filepath.Join(dir, "o.csv")}, "o.csv", ""},
		{"parquet", []string{"--format", "parquet", "-o", filepath.Join(dir, "o.parquet")}, "o.parquet", "decode: --format parquet is not in this build (the car's); use the developer's build"},
		{"lake", []string{"--out-dir", filepath.Join(dir, "lake")}, "lake", "decode: --out-dir: no format of this build writes a lake"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			args := append(append([]string{"decode", "--dbc", yukartDBC}, tt.args...), capture)
			err := run(context.Background(), env{strings.NewReader(""), &strings.Builder{}, &strings.Builder{}}, args)
			_, statErr := os.Stat(filepath.Join(dir, tt.out))
			if !carBuild || tt.carWant == "" {
				if err != nil || statErr != nil {
					t.Errorf("candec %s: got %v (%v), want %s written", strings.Join(args, " "), err, statErr, tt.out)
				}
				return
			}
			if exitCode(err) != exitUsage || !strings.Contains(err.Error(), tt.carWant) {
				t.Errorf("candec %s: got %v (status %d), want status 2 with %q", strings.Join(args, " "), err, exitCode(err), tt.carWant)
			}
			if statErr == nil {
				t.Errorf("candec %s: %s written, want nothing", strings.Join(args, " "), tt.out)
			}
		})
	}
}
