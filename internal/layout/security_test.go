package layout

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// securityRef is a test named by docs/security.md: `package: TestName`.
var securityRef = regexp.MustCompile("`([a-z0-9/]+): ((?:Test|Fuzz)[A-Za-z0-9_]+)`")

// TestSecurityDocTests checks that every test docs/security.md names is
// a test or fuzzer of the package it names.
func TestSecurityDocTests(t *testing.T) {
	root := filepath.Join("..", "..")
	doc, err := os.ReadFile(filepath.Join(root, "docs", "security.md"))
	if err != nil {
		t.Fatal(err)
	}
	refs := securityRef.FindAllStringSubmatch(string(doc), -1)
	if len(refs) < 50 {
		t.Fatalf("docs/security.md names %d tests, want every guarantee's (at least 50)", len(refs))
	}
	sources := map[string]string{} // package folder → its test files
	for _, r := range refs {
		dir, name := r[1], r[2]
		src, ok := sources[dir]
		if !ok {
			files, _ := filepath.Glob(filepath.Join(root, dir, "*_test.go"))
			var b strings.Builder
			for _, f := range files {
				text, err := os.ReadFile(f)
				if err != nil {
					t.Fatal(err)
				}
				b.Write(text)
			}
			src = b.String()
			sources[dir] = src
		}
		if !regexp.MustCompile(`(?m)^func ` + name + `\(`).MatchString(src) {
			t.Errorf("docs/security.md names %s: %s, which is no test of that package", dir, name)
		}
	}
}
