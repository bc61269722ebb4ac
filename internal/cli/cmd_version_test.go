package cli

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestVersionOfBuiltBinary: a binary built from a git checkout names its
// revision, never "devel".
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
	exe := filepath.Join(t.TempDir(), "candec")
	if out, err := exec.Command("go", "build", "-buildvcs=auto", "-o", exe, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	out, err := exec.Command(exe, "version").Output()
	if err != nil {
		t.Fatalf("candec version: %v", err)
	}
	got := string(out)
	if !strings.Contains(got, "revision "+strings.TrimSpace(string(rev))) {
		t.Errorf("candec version:\n%s\nwant the revision %s", got, rev)
	}
	if first, _, _ := strings.Cut(got, "\n"); strings.Contains(first, "devel") {
		t.Errorf("first line %q says devel although the revision is known", first)
	}
}
