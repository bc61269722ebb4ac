//go:build lean

package main

import (
	"context"
	"errors"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
)

// leanBuild says whether the tests run in the lean build (-tags
// car,lean), where run, replay and watch are the sibling's.
const leanBuild = true

// TestLeanSibling: the lean build runs run, replay and watch only in a
// regular, executable candec-mqtt beside its own executable that is not
// itself; anything else is refused, naming what is wrong.
func TestLeanSibling(t *testing.T) {
	tests := []struct {
		name  string
		exe   string                 // the lean executable's name in the folder
		setup func(dir string) error // makes the folder's candec-mqtt, if any
		want  string                 // in the error; "" for the sibling found
	}{
		{"found", "candec", func(dir string) error { return os.WriteFile(filepath.Join(dir, mqttSibling), nil, 0o755) }, ""},
		{"missing", "candec", func(string) error { return nil }, "no such file"},
		{"folder", "candec", func(dir string) error { return os.Mkdir(filepath.Join(dir, mqttSibling), 0o755) }, "not a regular file"},
		{"not executable", "candec", func(dir string) error { return os.WriteFile(filepath.Join(dir, mqttSibling), nil, 0o644) }, "not executable"},
		{"itself", "candec", func(dir string) error { return os.Link(filepath.Join(dir, "candec"), filepath.Join(dir, mqttSibling)) }, "this lean build itself"},
		{"named as the sibling", mqttSibling, func(string) error { return nil }, "is itself the lean build"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			exe := filepath.Join(dir, tt.exe)
			if err := os.WriteFile(exe, nil, 0o755); err != nil {
				t.Fatal(err)
			}
			if err := tt.setup(dir); err != nil {
				t.Fatal(err)
			}
			got, err := siblingOf(exe)
			if tt.want == "" {
				if want := filepath.Join(dir, mqttSibling); err != nil || got != want {
					t.Errorf("siblingOf: got %q, %v; want %q", got, err, want)
				}
				return
			}
			if !errors.Is(err, errSibling) || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("siblingOf: got %q, %v; want an error saying %q", got, err, tt.want)
			}
		})
	}
}

// fakeExec stands in for the lean build's executable and execve for
// the test: the executable is dir/candec, and execve records its call and
// returns fail.
func fakeExec(t *testing.T, dir string, fail error) *[][]string {
	t.Helper()
	oldExe, oldExec := executable, execve
	t.Cleanup(func() {
		executable, execve = oldExe, oldExec
		// A run handed over leaves SIGHUP ignored (viaSibling):
		// Notify undoes Ignore, Stop then leaves SIGHUP's default.
		c := make(chan os.Signal, 1)
		signal.Notify(c, syscall.SIGHUP)
		signal.Stop(c)
	})
	executable = func() (string, error) { return filepath.Join(dir, "candec"), nil }
	var calls [][]string
	execve = func(path string, argv, env []string) error {
		if !slices.Equal(env, os.Environ()) {
			t.Errorf("execve %s: got another environment than candec's", path)
		}
		calls = append(calls, append([]string{path}, argv...))
		return fail
	}
	return &calls
}

// TestLeanHandsOver: in the lean build, run, replay and watch (and their
// help) execute candec-mqtt with the command and its arguments as they
// were given; a sibling that is missing or fails to start is exit
// status 1, naming it, and nothing is written.
func TestLeanHandsOver(t *testing.T) {
	dir := t.TempDir()
	sibling := filepath.Join(dir, mqttSibling)
	calls := fakeExec(t, dir, syscall.ENOEXEC)
	var out, errOut strings.Builder
	e := env{strings.NewReader(""), &out, &errOut}
	if err := run(context.Background(), e, []string{"run", "--config", "x.yaml"}); exitCode(err) != exitFailure || !errors.Is(err, errSibling) {
		t.Fatalf("candec run without %s: got exit status %d (%v), want %d and %q", mqttSibling, exitCode(err), err, exitFailure, errSibling)
	}
	if len(*calls) != 0 {
		t.Fatalf("without a sibling: got execve %q, want none", *calls)
	}
	if err := os.WriteFile(sibling, nil, 0o755); err != nil {
		t.Fatal(err)
	}
	tests := [][]string{
		{"run", "--config", "x.yaml"},
		{"replay", "--speed", "0", "-", "extra"},
		{"watch", "--no-such-flag"},
		{"help", "watch"},
	}
	for _, args := range tests {
		*calls = nil
		err := run(context.Background(), e, args)
		if exitCode(err) != exitFailure || !errors.Is(err, syscall.ENOEXEC) || !strings.Contains(err.Error(), sibling) {
			t.Errorf("candec %q, execve failing: got exit status %d (%v), want %d naming %s", args, exitCode(err), err, exitFailure, sibling)
		}
		want := append([]string{sibling, sibling}, args...)
		if args[0] == "help" {
			want = []string{sibling, sibling, args[1], "-h"}
		}
		if len(*calls) != 1 || !slices.Equal((*calls)[0], want) {
			t.Errorf("candec %q: got execve %q, want one, of %q", args, *calls, want)
		}
	}
	if out.Len() > 0 || errOut.Len() > 0 {
		t.Errorf("got output %q and %q, want none: the sibling writes", out.String(), errOut.String())
	}
}

// TestLeanRunIgnoresHUPAcrossExec: the lean build hands run over with
// SIGHUP ignored, which execve keeps (a caught signal's handler it does
// not), so that a SIGHUP before the sibling's earlyhup catches it does
// not end the process; the other commands keep SIGHUP's default.
func TestLeanRunIgnoresHUPAcrossExec(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, mqttSibling), nil, 0o755); err != nil {
		t.Fatal(err)
	}
	fakeExec(t, dir, syscall.ENOEXEC)
	ignored := map[string]bool{}
	inner := execve
	execve = func(path string, argv, env []string) error {
		ignored[argv[1]] = signal.Ignored(syscall.SIGHUP)
		return inner(path, argv, env)
	}
	e := env{strings.NewReader(""), &strings.Builder{}, &strings.Builder{}}
	for _, cmd := range []string{"replay", "run"} { // run last: it leaves SIGHUP ignored
		_ = run(context.Background(), e, []string{cmd, "x"})
	}
	if !ignored["run"] || ignored["replay"] {
		t.Errorf("SIGHUP ignored at execve: run %v, replay %v; want true, false", ignored["run"], ignored["replay"])
	}
}
