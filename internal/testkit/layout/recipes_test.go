package layout

import (
	"go/ast"
	"go/parser"
	"go/scanner"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// recipes are the sections of docs/contributing.md that promise a
// change in at most three Go files, tests aside.
var recipes = []string{"## A capture format", "## An output format", "## A policy key", "## A command"}

// recipeGoFile is a Go file a recipe's step names, as `dir/file.go`
// (`dir/cmd_<name>.go` for a file the change adds, `<name>` standing
// for any name).
var recipeGoFile = regexp.MustCompile("`((?:[a-z0-9_./-]|<name>)+\\.go)`")

// registryRef is a step's "`formats` in `capture/source.go`": the
// table (or list) the change adds a row to, in the file that holds it.
var registryRef = regexp.MustCompile("`([A-Za-z][A-Za-z0-9]*)` in `([a-z0-9_./-]+\\.go)`")

// recipeSteps returns each numbered list of the section of doc that
// begins with heading: the steps of one way to make the change.
func recipeSteps(t *testing.T, doc, heading string) []string {
	t.Helper()
	_, sec, ok := strings.Cut(doc, "\n"+heading)
	if !ok {
		t.Fatalf("docs/contributing.md has no section %q", heading)
	}
	if i := strings.Index(sec, "\n## "); i >= 0 {
		sec = sec[:i]
	}
	var lists []string
	var cur strings.Builder
	for _, line := range strings.Split(sec, "\n") {
		switch {
		case len(line) > 2 && line[0] >= '1' && line[0] <= '9' && line[1] == '.':
			cur.WriteString(line + "\n")
		case cur.Len() > 0 && strings.HasPrefix(line, "   "):
			cur.WriteString(line + "\n")
		case cur.Len() > 0:
			lists = append(lists, cur.String())
			cur.Reset()
		}
	}
	if cur.Len() > 0 {
		lists = append(lists, cur.String())
	}
	return lists
}

// TestContributingRecipes keeps docs/contributing.md's promise: each
// way to add a capture format, an output format, a policy key or a
// command names at most three Go files (tests aside) in its steps; each
// file named is there (for a file the change adds, its folder and one
// like it); and each table a step adds a row to is declared in the file
// the step names.
func TestContributingRecipes(t *testing.T) {
	root := filepath.Join("..", "..", "..")
	text, err := os.ReadFile(filepath.Join(root, "docs", "contributing.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, heading := range recipes {
		lists := recipeSteps(t, string(text), heading)
		if len(lists) == 0 {
			t.Errorf("%s: no numbered steps", heading)
		}
		for _, steps := range lists {
			var files []string
			for _, m := range recipeGoFile.FindAllStringSubmatch(steps, -1) {
				if f := m[1]; !strings.HasSuffix(f, "_test.go") && !slices.Contains(files, f) {
					files = append(files, f)
				}
			}
			if len(files) == 0 || len(files) > 3 {
				t.Errorf("%s: a way names %d Go files %q, want 1 to 3:\n%s", heading, len(files), files, steps)
			}
			for _, f := range files {
				pattern := strings.ReplaceAll(f, "<name>", "*")
				if got, _ := filepath.Glob(filepath.Join(root, pattern)); len(got) == 0 {
					t.Errorf("%s: names %s, and no such file is there", heading, f)
				}
			}
			for _, m := range registryRef.FindAllStringSubmatch(steps, -1) {
				if !declares(t, filepath.Join(root, m[2]), m[1]) {
					t.Errorf("%s: names `%s` in %s, which does not declare it", heading, m[1], m[2])
				}
			}
		}
	}
}

// declares reports whether the Go file declares name at its top level.
func declares(t *testing.T, file, name string) bool {
	t.Helper()
	f, err := parser.ParseFile(token.NewFileSet(), file, nil, parser.SkipObjectResolution)
	if err != nil {
		t.Errorf("%v", err)
		return false
	}
	for _, d := range f.Decls {
		switch d := d.(type) {
		case *ast.FuncDecl:
			if d.Recv == nil && d.Name.Name == name {
				return true
			}
		case *ast.GenDecl:
			for _, s := range d.Specs {
				switch s := s.(type) {
				case *ast.ValueSpec:
					for _, n := range s.Names {
						if n.Name == name {
							return true
						}
					}
				case *ast.TypeSpec:
					if s.Name.Name == name {
						return true
					}
				}
			}
		}
	}
	return false
}

// registries are the tables whose rows' names nothing else may spell:
// the table's file and variable, the field that names a row, and the
// other places that hold a row's name as a string for another reason
// (file → names), each said why.
var registries = []struct {
	file, table, field string
	others             map[string][]string
}{
	{"capture/source.go", "formats", "name", map[string][]string{
		"capture/blf.go":        {"blf"}, // the format its OffsetError names
		"capture/mf4_blocks.go": {"mf4"}, // the same
	}},
	{"internal/cmdkit/outformat/formats.go", "formats", "Name", map[string][]string{
		"internal/cmdkit/cli/cmd_decode.go":    {"json"}, // --format's default
		"internal/cmdkit/decodejob/job.go":     {"json"}, // the format a job without one writes
		"internal/cmdkit/cli/cmd_replay.go":    {"json"}, // --json, a flag
		"internal/cmdkit/cli/cmd_watch.go":     {"json"}, // --json, a flag
		"cmd/candec/cmd_tune.go":               {"json"}, // --json, a flag
		"service/config.go":                    {"json"}, // log_format's and encoding's value
		"service/log.go":                       {"json"}, // log_format's value
		"envelope/envelope.go":                 {"json"}, // the encoding's name
		"internal/cmdkit/outformat/formats.go": nil,
	}},
	{"pipeline/policy_keys.go", "policyKeys", "name", map[string][]string{
		"pipeline/out.go":       {"heartbeat"}, // an envelope's reason
		"internal/tune/text.go": {"heartbeat"}, // the reasons counted
	}},
}

// TestRegistriesAreTheOnlyList: a capture format's, an output format's
// and a policy key's name is spelt, as a string in non-test Go code, in
// its row and nowhere else but the places listed in registries: no
// second list of them (as the tuner once wrote policy keys by hand, and
// dropped every key added to the table).
func TestRegistriesAreTheOnlyList(t *testing.T) {
	root := filepath.Join("..", "..", "..")
	strs := stringsByFile(t, root)
	for _, r := range registries {
		names := rowNames(t, filepath.Join(root, r.file), r.table, r.field)
		if len(names) < 2 {
			t.Errorf("%s: %s has %d rows named by %s, want its rows", r.file, r.table, len(names), r.field)
		}
		for file, got := range strs {
			if file == r.file {
				continue
			}
			for _, n := range names {
				if slices.Contains(got, n) && !slices.Contains(r.others[file], n) {
					t.Errorf("%s spells %q, a row of %s in %s: use the table", file, n, r.table, r.file)
				}
			}
		}
	}
}

// rowNames returns the string values of field in the rows of the
// composite literal that initialises the variable table in file.
func rowNames(t *testing.T, file, table, field string) []string {
	t.Helper()
	f, err := parser.ParseFile(token.NewFileSet(), file, nil, parser.SkipObjectResolution)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	ast.Inspect(f, func(n ast.Node) bool {
		vs, ok := n.(*ast.ValueSpec)
		if !ok || len(vs.Names) != 1 || vs.Names[0].Name != table || len(vs.Values) != 1 {
			return true
		}
		ast.Inspect(vs.Values[0], func(n ast.Node) bool {
			if kv, ok := n.(*ast.KeyValueExpr); ok {
				if k, ok := kv.Key.(*ast.Ident); ok && k.Name == field {
					if lit, ok := kv.Value.(*ast.BasicLit); ok && lit.Kind == token.STRING {
						s, _ := strconv.Unquote(lit.Value)
						names = append(names, s)
					}
				}
			}
			return true
		})
		return false
	})
	return names
}

// stringsByFile returns the string literals of every non-test Go file
// under root, by the file's slash path from root.
func stringsByFile(t *testing.T, root string) map[string][]string {
	t.Helper()
	out := map[string][]string{}
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == "testdata" || d.Name() == "deploy" || strings.HasPrefix(d.Name(), ".")) && path != root {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		src, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		fset := token.NewFileSet()
		var s scanner.Scanner
		s.Init(fset.AddFile(path, -1, len(src)), src, nil, 0)
		for {
			_, tok, lit := s.Scan()
			if tok == token.EOF {
				break
			}
			if tok == token.STRING {
				if v, err := strconv.Unquote(lit); err == nil {
					out[filepath.ToSlash(rel)] = append(out[filepath.ToSlash(rel)], v)
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}
