package main

import (
	"bytes"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
)

// maxInitAllocs bounds the allocations of the initialisation of each of
// candec's own packages. Go runs the init of every package a binary
// links at every start, whatever the command: a table built there (a
// map of models, a policy's defaults parsed from YAML) is paid by every
// `candec version` and every one-frame decode. Build it on first use
// (sync.OnceValue) instead.
const maxInitAllocs = 64

// TestInitAllocs: `candec version`, a real process of this build traced
// with GODEBUG=inittrace=1, shows no package of this module whose
// initialisation allocates more than maxInitAllocs times.
func TestInitAllocs(t *testing.T) {
	cmd := exec.Command(os.Args[0], "version")
	cmd.Env = append(os.Environ(), asCandecEnv+"=1", "GODEBUG=inittrace=1")
	var stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = io.Discard, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("candec version: %v\n%s", err, stderr.Bytes())
	}
	seen := 0
	for line := range strings.SplitSeq(stderr.String(), "\n") {
		// init github.com/yukart/candec/pipeline @27 ms, 0.39 ms clock, 44072 bytes, 242 allocs
		f := strings.Fields(line)
		if len(f) < 4 || f[0] != "init" || f[len(f)-1] != "allocs" || !strings.HasPrefix(f[1], "github.com/yukart/candec/") {
			continue
		}
		seen++
		n, err := strconv.Atoi(f[len(f)-2])
		if err != nil {
			t.Fatalf("inittrace line %q: %v", line, err)
		}
		if n > maxInitAllocs {
			t.Errorf("%s: its initialisation allocates %d times, want at most %d: build its tables on first use", f[1], n, maxInitAllocs)
		}
	}
	if seen == 0 {
		t.Fatalf("candec version with GODEBUG=inittrace=1: no init of this module's packages in\n%s", stderr.Bytes())
	}
}
