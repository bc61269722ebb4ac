package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/yukart/candec/internal/cmdkit/cli"
)

// Hostile flag values: every flag of every command is found through the
// flag sets the commands make (flagSetCreated), so a flag added later is
// tried too, with nothing to list here.

var flagSeed = flag.Uint64("flagseed", 1, "seed of TestHostileFlagValues's random picks")

// hostileBase is what each command needs besides the flag under test to
// get past its other checks quickly: a closed port for a broker, a short
// capture, a DBC. The flag under test comes after these flags, so it
// wins over a flag of the same name.
func hostileBase(t *testing.T) map[string]struct{ flags, args []string } {
	dir := t.TempDir()
	idle, err := os.ReadFile(filepath.Join(filepath.Dir(yukartDBC), "idle.log"))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.SplitAfterN(string(idle), "\n", 301)
	capture := filepath.Join(dir, "short.log")
	dbcFile, err := filepath.Abs(yukartDBC)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(capture, []byte(strings.Join(lines[:300], "")), 0o644); err != nil {
		t.Fatal(err)
	}
	closed := "mqtt://127.0.0.1:1" // nothing listens on port 1
	type base = struct{ flags, args []string }
	yukartDBC := dbcFile
	return map[string]base{
		"run":             {flags: []string{"--dbc", yukartDBC, "--broker", closed, "--metrics-addr", ""}},
		"demo":            {flags: []string{"--broker", closed, "--connect-timeout", "200ms", "--duration", "1s"}},
		"decode":          {flags: []string{"--dbc", yukartDBC}, args: []string{capture}},
		"dbc":             {args: []string{yukartDBC}},
		"generate":        {flags: []string{"--duration", "200ms"}},
		"replay":          {flags: []string{"--broker", closed, "--connect-timeout", "200ms"}, args: []string{capture}},
		"watch":           {flags: []string{"--broker", closed, "--connect-timeout", "200ms", "--duration", "1s"}},
		"tune":            {flags: []string{"--dbc", yukartDBC}, args: []string{capture}},
		"ingest":          {flags: []string{"--dbc", yukartDBC, "--out-dir", filepath.Join(dir, "lake"), "--broker", closed, "--connect-timeout", "200ms"}},
		"bench":           {flags: []string{"--plan-only", "--no-results"}},
		"bench summary":   {flags: []string{"--results", dir}},
		"campaign keygen": {flags: []string{"-o", filepath.Join(dir, "key")}},
		"campaign sign": {flags: []string{"--key", filepath.Join(dir, "key"), "--policy", filepath.Join(dir, "p.yaml"), "--version", "1",
			"--vehicles", "*", "--dbc", yukartDBC}},
		"campaign push":   {flags: []string{"--broker", closed, "--timeout", "200ms"}, args: []string{filepath.Join(dir, "c.json")}},
		"campaign status": {flags: []string{"--broker", closed, "--timeout", "200ms"}},
	}
}

// commandFlags returns the flags of command (a "bench summary" style
// name is a command and its subcommand), found by asking for its help.
func commandFlags(t *testing.T, command string) []*flag.Flag {
	t.Helper()
	var sets []*flag.FlagSet
	cli.FlagSetCreated = func(fs *flag.FlagSet) { sets = append(sets, fs) }
	defer func() { cli.FlagSetCreated = nil }()
	var out bytes.Buffer
	if err := run(context.Background(), cli.Env{Stdin: strings.NewReader(""), Stdout: &out, Stderr: &out}, append(strings.Fields(command), "-h")); err != nil {
		t.Fatalf("%s -h: %v, want the help and exit 0", command, err)
	}
	var flags []*flag.Flag
	for _, fs := range sets {
		if fs.Name() != command {
			continue
		}
		fs.VisitAll(func(f *flag.Flag) {
			if f.Name != "h" && f.Name != "help" {
				flags = append(flags, f)
			}
		})
	}
	if len(flags) == 0 && command != "dbc" {
		t.Fatalf("%s: no flags found", command)
	}
	return flags
}

// numeric reports whether f takes a number or a duration: by its value's
// type, or by a default that reads as one.
func numeric(f *flag.Flag) bool {
	if g, ok := f.Value.(flag.Getter); ok {
		switch g.Get().(type) {
		case int, int64, uint, uint64, float64, time.Duration:
			return true
		case bool, string:
			return false
		}
	}
	if _, err := strconv.ParseFloat(f.DefValue, 64); err == nil {
		return true
	}
	_, err := time.ParseDuration(f.DefValue)
	return err == nil && f.DefValue != ""
}

// anyNumber lists the flags where every number, negative ones included,
// is a meaningful value.
var anyNumber = map[string]bool{
	"generate --seed": true, // any int64 seeds the generator
}

// invalidNumbers are values no numeric flag may take: each must be
// refused before the command does anything, with an error naming the flag.
var invalidNumbers = []string{"-1", "-1s", "-0.5", "NaN", "+Inf", "abc", "", "1x"}

// otherValues may be right or wrong depending on the flag; a command given
// one either fails with an error or does what it does, never panics,
// hangs or exits 0 having printed nothing.
var otherValues = []string{"0", "0s", "1e-300", "1e300", "99999999999999999999", "-", "/nonexistent/dir/file", "\x00", "mqtt://", strings.Repeat("9", 400)}

type hostileCase struct {
	command, flag, value string
	invalid              bool
}

// TestHostileFlagValues gives every flag of every command each invalid
// number (numeric flags) and a random pick of other values (every flag).
// Run with -flagseed N for another pick.
func TestHostileFlagValues(t *testing.T) {
	if testing.Short() {
		t.Skip("short")
	}
	base := hostileBase(t)
	// Values such as -o 0 write files: into a directory of the test's.
	t.Chdir(t.TempDir())
	rng := rand.New(rand.NewPCG(*flagSeed, 0))
	var cases []hostileCase
	var numbers []string
	names := make([]string, 0, len(base))
	for c := range base {
		names = append(names, c)
	}
	sort.Strings(names)
	for _, c := range names {
		for _, f := range commandFlags(t, c) {
			if numeric(f) && !anyNumber[c+" --"+f.Name] {
				numbers = append(numbers, c+" --"+f.Name)
				for _, v := range invalidNumbers {
					cases = append(cases, hostileCase{c, f.Name, v, true})
				}
			}
			for range 2 {
				cases = append(cases, hostileCase{c, f.Name, otherValues[rng.IntN(len(otherValues))], false})
			}
		}
	}
	t.Logf("%d cases, -flagseed %d; numeric flags: %s", len(cases), *flagSeed, strings.Join(numbers, ", "))
	for _, hc := range cases {
		t.Run(fmt.Sprintf("%s/%s=%q", hc.command, hc.flag, hc.value), func(t *testing.T) {
			checkHostile(t, base, hc)
		})
	}
}

func checkHostile(t *testing.T, base map[string]struct{ flags, args []string }, hc hostileCase) {
	b := base[hc.command]
	args := append(strings.Fields(hc.command), b.flags...)
	args = append(args, "--"+hc.flag+"="+hc.value)
	args = append(args, b.args...)

	ctx, cancel := context.WithTimeout(context.Background(), 1500*time.Millisecond)
	defer cancel()
	var stdout, stderr bytes.Buffer
	done := make(chan error, 1)
	go func() {
		defer func() {
			if p := recover(); p != nil {
				done <- fmt.Errorf("panic: %v", p)
			}
		}()
		done <- run(ctx, cli.Env{Stdin: strings.NewReader(""), Stdout: &stdout, Stderr: &stderr}, args)
	}()
	var err error
	select {
	case err = <-done:
	case <-time.After(15 * time.Second):
		t.Fatalf("candec %q did not return 13 s after its context ended", args)
	}
	if err != nil && strings.HasPrefix(err.Error(), "panic: ") {
		t.Fatalf("candec %q: %v", args, err)
	}
	if hc.invalid {
		switch {
		case err == nil:
			t.Fatalf("candec %q: exit 0, want the value refused\nstderr: %s", args, stderr.String())
		case errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled):
			t.Fatalf("candec %q ran until stopped (%v), want the value refused at once", args, err)
		case !strings.Contains(err.Error(), hc.flag):
			t.Fatalf("candec %q: error %q does not name --%s", args, err, hc.flag)
		case cli.ExitCode(err) == 0:
			t.Fatalf("candec %q: exit status 0 with error %v", args, err)
		}
		return
	}
	if err == nil && stdout.Len() == 0 && stderr.Len() == 0 && !wroteFile(t) {
		t.Fatalf("candec %q: exit 0, printed nothing and wrote no file", args)
	}
}

// wroteFile reports whether the working directory holds a file with
// something in it (an output named by a flag such as -o).
func wroteFile(t *testing.T) bool {
	ents, err := os.ReadDir(".")
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		if fi, err := e.Info(); err == nil && fi.Mode().IsRegular() && fi.Size() > 0 {
			return true
		}
	}
	return false
}
