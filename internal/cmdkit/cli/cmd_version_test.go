package cli

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestVersionOfBuiltBinary: each binary built from a git checkout (the
// developer's and the car's) names its revision, never "devel".
func TestVersionOfBuiltBinary(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	rev, err := exec.Command("git", "rev-parse", "HEAD").Output()
	if err != nil {
		t.Skip("not in a git checkout: no revision to expect")
	}
	top, err := exec.Command("git", "rev-parse", "--show-toplevel").Output()
	if err != nil {
		t.Skip("not in a git checkout: no revision to expect")
	}
	// The go command stamps the revision only where .git is a
	// directory: not in a linked worktree (git worktree add), whose .git
	// is a file.
	if fi, err := os.Stat(filepath.Join(strings.TrimSpace(string(top)), ".git")); err != nil || !fi.IsDir() {
		t.Skip("a linked git worktree: the go command records no revision here")
	}
	for _, main := range []string{"cmd/candec", "cmd/candec-car"} {
		exe := filepath.Join(t.TempDir(), "candec")
		build := exec.Command("go", "build", "-buildvcs=auto", "-o", exe, "./"+main)
		build.Dir = filepath.Join("..", "..", "..")
		if out, err := build.CombinedOutput(); err != nil {
			t.Fatalf("go build ./%s: %v\n%s", main, err, out)
		}
		out, err := exec.Command(exe, "version").Output()
		if err != nil {
			t.Fatalf("%s: candec version: %v", main, err)
		}
		got := string(out)
		if !strings.Contains(got, "revision "+strings.TrimSpace(string(rev))) {
			t.Errorf("%s: candec version:\n%s\nwant the revision %s", main, got, rev)
		}
		if first, _, _ := strings.Cut(got, "\n"); strings.Contains(first, "devel") {
			t.Errorf("%s: first line %q says devel although the revision is known", main, first)
		}
	}
}
