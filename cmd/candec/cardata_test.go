package main

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/yukart/candec/internal/cmdkit/cli"
	"github.com/yukart/candec/internal/lab/cardata"
)

// candecIn runs this test binary as candec (TestMain) with args, in dir,
// and returns its standard output and error and its error.
func candecIn(t *testing.T, dir string, args ...string) (stdout, stderr string, err error) {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(exe, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), asCandecEnv+"=1")
	var o, e bytes.Buffer
	cmd.Stdout, cmd.Stderr = &o, &e
	err = cmd.Run()
	return o.String(), e.String(), err
}

// TestDefaultsOutsideTheRepository: in an empty directory, far from a
// clone, the commands whose defaults are the car's DBC and capture run
// on the copies built into candec, and say which they used.
func TestDefaultsOutsideTheRepository(t *testing.T) {
	dir := t.TempDir()
	want, err := os.ReadFile(filepath.Join("..", "..", cardata.CaptureFile))
	if err != nil {
		t.Fatal(err)
	}
	out, stderr, err := candecIn(t, dir, "generate")
	if err != nil {
		t.Fatalf("generate: %v\n%s", err, stderr)
	}
	if out != string(want) {
		t.Errorf("generate: got %d bytes, want testdata/idle.log (%d bytes)", len(out), len(want))
	}
	capture := filepath.Join(dir, "idle.log")
	if err := os.WriteFile(capture, want, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		args []string
		want string // in the standard output and error
	}{
		{[]string{"tune", "--top", "3", "idle.log"}, "DBC: " + cardata.DBCName},
		{[]string{"plot", "--signals", "MOT_*Speed*", "-o", "speed.svg", "idle.log"}, "wrote speed.svg"},
		{[]string{"demo", "--duration", "1500ms"}, cardata.CaptureName + " replayed in a loop"},
		{[]string{"demo", "--duration", "1500ms"}, "decoded with " + cardata.DBCName},
	} {
		out, stderr, err := candecIn(t, dir, tc.args...)
		if err != nil {
			t.Errorf("%s: %v\n%s", strings.Join(tc.args, " "), err, stderr)
			continue
		}
		if !strings.Contains(out+stderr, tc.want) {
			t.Errorf("%s: output lacks %q:\n%s%s", strings.Join(tc.args, " "), tc.want, out, stderr)
		}
	}
	// A file given is that file, even when it is the default's name.
	_, stderr, err = candecIn(t, dir, "generate", "--dbc", cardata.DBCFile)
	if err == nil || !strings.Contains(stderr, cardata.DBCFile) {
		t.Errorf("generate --dbc %s outside a clone: got %v, %q; want an error naming the file", cardata.DBCFile, err, stderr)
	}
	_, stderr, err = candecIn(t, dir, "demo", "--duration", "1s", "--capture", cardata.CaptureFile)
	if err == nil || !strings.Contains(stderr, cardata.CaptureFile) {
		t.Errorf("demo --capture %s outside a clone: got %v, %q; want an error naming the file", cardata.CaptureFile, err, stderr)
	}
}

// TestBuiltInDefaultsInHelp: the help of each --dbc and --capture whose
// default is the car's says what stands in where the file is missing.
func TestBuiltInDefaultsInHelp(t *testing.T) {
	for _, tc := range []struct{ command, want string }{
		{"generate", "the car's DBC built into candec"},
		{"tune", "the car's DBC built into candec"},
		{"plot", "the car's DBC built into candec"},
		{"demo", "the car's DBC built into candec"},
		{"demo", "the car's idle capture built into candec"},
	} {
		var stdout bytes.Buffer
		if err := run(context.Background(), cli.Env{Stdin: nil, Stdout: &stdout, Stderr: &bytes.Buffer{}}, []string{tc.command, "-h"}); err != nil {
			t.Fatalf("%s -h: %v", tc.command, err)
		}
		if !strings.Contains(stdout.String(), tc.want) {
			t.Errorf("%s -h lacks %q:\n%s", tc.command, tc.want, stdout.String())
		}
	}
}
