package layout

import (
	"path/filepath"
	"regexp"
	"testing"
)

// docTestRef is a test a document names: `package: TestName`.
var docTestRef = regexp.MustCompile("`([a-z0-9/]+): ((?:Test|Fuzz)[A-Za-z0-9_]+)`")

// TestSecurityDocTests checks that every test docs/security.md names is
// a test or fuzzer of the package it names.
func TestSecurityDocTests(t *testing.T) {
	missing, named := missingDocTests(t, filepath.Join("..", "..", ".."), filepath.Join("docs", "security.md"))
	if named < 50 {
		t.Fatalf("docs/security.md names %d tests, want every guarantee's (at least 50)", named)
	}
	for _, m := range missing {
		t.Errorf("docs/security.md names %s, which is no test of that package", m)
	}
}
