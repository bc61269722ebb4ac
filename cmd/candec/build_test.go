package main

import (
	"context"
	"slices"
	"strings"
	"testing"
)

// carCommands are the commands of the car's build (-tags car): what runs
// on the car, and nothing of the developer's lab.
var carCommands = []string{"run", "decode", "convert", "dbc", "replay", "watch", "generate", "version"}

// inBuild says whether this build has the command called name.
func inBuild(name string) bool {
	c, ok := lookup(name)
	return ok && c.run != nil
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
