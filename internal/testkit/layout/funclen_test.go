package layout

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// maxFuncLines is the longest a function outside tests may run, from
// its func keyword to its closing brace: what a reader takes in at once.
const maxFuncLines = 80

// longFunctions lists the functions of the Go files under root (tests,
// testdata and hidden folders left out) longer than limit lines, as
// "folder/file.go:Name (N lines)".
func longFunctions(t *testing.T, root string, limit int) []string {
	t.Helper()
	fset := token.NewFileSet()
	var out []string
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if path != root && (strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, 0)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		for _, decl := range f.Decls {
			fd, ok := decl.(*ast.FuncDecl)
			if !ok || fd.Body == nil {
				continue
			}
			name := filepath.ToSlash(rel) + ":" + fd.Name.Name
			n := fset.Position(fd.End()).Line - fset.Position(fd.Pos()).Line + 1
			if n > limit {
				out = append(out, name+" ("+strconv.Itoa(n)+" lines)")
			}
		}
		return nil
	})
	if err != nil {
		t.Fatalf("walk %s: %v", root, err)
	}
	return out
}

// writeFile writes text to path, making its folder.
func writeFile(t *testing.T, path, text string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestFunctionLength checks that no function outside tests runs over
// maxFuncLines.
func TestFunctionLength(t *testing.T) {
	for _, f := range longFunctions(t, filepath.Join("..", "..", ".."), maxFuncLines) {
		t.Errorf("%s: over %d lines; name its steps as functions", f, maxFuncLines)
	}
}

// TestFunctionLengthCatches checks that the check fails a long function
// and passes a short one or one in a test.
func TestFunctionLengthCatches(t *testing.T) {
	long := "package p\n\nfunc Long() {\n" + strings.Repeat("\tprintln()\n", 79) + "}\n"
	short := "package p\n\nfunc Short() {\n" + strings.Repeat("\tprintln()\n", 78) + "}\n"
	tests := []struct {
		name, file, src string
		want            int
	}{
		{"81 lines", "long.go", long, 1},
		{"80 lines", "short.go", short, 0},
		{"in a test", "long_test.go", long, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root := t.TempDir()
			writeFile(t, filepath.Join(root, "p", tt.file), tt.src)
			if got := longFunctions(t, root, maxFuncLines); len(got) != tt.want {
				t.Errorf("got %d long functions %q, want %d", len(got), got, tt.want)
			}
		})
	}
}
