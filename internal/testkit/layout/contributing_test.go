package layout

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// missingDocTests returns the tests that doc names as `package: TestName`
// and that are no test or fuzzer of that package, and how many it names.
func missingDocTests(t *testing.T, root, doc string) (missing []string, named int) {
	t.Helper()
	return missingTests(t, root, doc, docTestRef)
}

// missingTests returns the tests that file names as ref finds them (the
// package folder, then the name) and that are no test or fuzzer of that
// package, and how many it names.
func missingTests(t *testing.T, root, file string, ref *regexp.Regexp) (missing []string, named int) {
	t.Helper()
	text, err := os.ReadFile(filepath.Join(root, file))
	if err != nil {
		t.Fatal(err)
	}
	refs := ref.FindAllStringSubmatch(string(text), -1)
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
			missing = append(missing, dir+": "+name)
		}
	}
	return missing, len(refs)
}

// TestContributingDocTests checks that every test docs/contributing.md
// names as guarding a change exists in the package it names.
func TestContributingDocTests(t *testing.T) {
	missing, named := missingDocTests(t, filepath.Join("..", "..", ".."), filepath.Join("docs", "contributing.md"))
	if named < 20 {
		t.Fatalf("docs/contributing.md names %d tests, want the guards of every change (at least 20)", named)
	}
	for _, m := range missing {
		t.Errorf("docs/contributing.md names %s, which is no test of that package", m)
	}
}

// TestContributingDocTestsCatches checks that a named test that does not
// exist is found.
func TestContributingDocTestsCatches(t *testing.T) {
	root := t.TempDir()
	writeFile(t, filepath.Join(root, "p", "p_test.go"), "package p\n\nfunc TestThere(t *testing.T) {}\n")
	writeFile(t, filepath.Join(root, "doc.md"), "`p: TestThere` and `p: TestGone`\n")
	missing, named := missingDocTests(t, root, "doc.md")
	if named != 2 || len(missing) != 1 || missing[0] != "p: TestGone" {
		t.Errorf("got %d named, missing %q; want 2 named, missing [p: TestGone]", named, missing)
	}
}
