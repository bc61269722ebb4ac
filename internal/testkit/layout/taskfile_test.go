package layout

import (
	"path/filepath"
	"regexp"
	"testing"
)

// taskfileFuzzer is a fuzzer the Taskfile's fuzz task runs: "package
// FuzzName" in its list.
var taskfileFuzzer = regexp.MustCompile(`(?:\[|, )([a-z0-9/]+) (Fuzz[A-Za-z0-9_]+)`)

// TestTaskfileFuzzers checks that every fuzzer `task fuzz` runs is one
// of the package it names: a fuzzer moved or renamed would leave the
// task fuzzing nothing, with a warning and exit 0.
func TestTaskfileFuzzers(t *testing.T) {
	missing, named := missingTests(t, filepath.Join("..", "..", ".."), "Taskfile.yml", taskfileFuzzer)
	if named < 20 {
		t.Fatalf("Taskfile.yml's fuzz task names %d fuzzers, want every fuzzer of outside input (at least 20)", named)
	}
	for _, m := range missing {
		t.Errorf("Taskfile.yml's fuzz task names %s, which is no fuzzer of that package", m)
	}
}
