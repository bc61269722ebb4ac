package layout

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

const module = "github.com/yukart/candec"

// libraries are the top-level packages another Go program may import.
var libraries = []string{"frame", "dbc", "decoder", "capture", "rawbatch", "envelope", "pipeline", "mqttclient", "mqttclient/wire", "campaign"}

// shared is the folder of the internal packages every package may
// import: small helpers with no candec knowledge that import nothing of
// the module but each other, for what the libraries and the service
// need too.
const shared = "internal/base/"

// internalGroups are the folders internal/ may hold, each a group of
// packages by what they serve (internal/README.md is the floor plan).
var internalGroups = []string{"base", "cmdkit", "fleet", "lab", "testkit", "tune"}

// topLevel lists every folder the repository's top level may have.
var topLevel = append([]string{"service", "cmd", "internal", "benchmarks", "deploy", "docs", "examples", "testdata"}, libraries...)

type pkg struct {
	ImportPath   string
	Imports      []string
	TestImports  []string
	XTestImports []string
}

// tier names the rule a package (path relative to the module) is under.
func tier(rel string) string {
	switch {
	case slices.Contains(libraries, rel):
		return "library"
	case strings.HasPrefix(rel, shared):
		return "shared"
	case rel == "service":
		return "service"
	case rel == "cmd" || strings.HasPrefix(rel, "cmd/"):
		return "cmd"
	case rel == "internal" || strings.HasPrefix(rel, "internal/"):
		return "internal"
	case rel == "benchmarks" || strings.HasPrefix(rel, "benchmarks/"):
		return "benchmarks"
	case strings.HasPrefix(rel, "examples/"):
		return "example"
	}
	return "unknown"
}

// allowed says whether a package of tier from may import one of tier to,
// in its own code or (test) in its tests.
func allowed(from, to string, test bool) bool {
	if to == "shared" {
		return true
	}
	switch from {
	case "shared":
		return test && to == "internal"
	case "library", "example":
		return to == "library" || test && to == "internal"
	case "service":
		return to == "library" || to == "service" || test && to == "internal"
	case "cmd", "internal", "benchmarks":
		return to != "unknown"
	}
	return false
}

// violations lists the imports of pkgs that break the rule.
func violations(pkgs []pkg) []string {
	var out []string
	for _, p := range pkgs {
		rel, ok := strings.CutPrefix(p.ImportPath, module+"/")
		if !ok {
			continue
		}
		from := tier(rel)
		if from == "unknown" {
			out = append(out, rel+": a package outside the layout (see the package documentation)")
			continue
		}
		check := func(imports []string, test bool) {
			for _, imp := range imports {
				irel, ok := strings.CutPrefix(imp, module+"/")
				if !ok || irel == rel {
					continue
				}
				if to := tier(irel); !allowed(from, to, test) {
					what := "imports"
					if test {
						what = "tests import"
					}
					out = append(out, rel+" ("+from+") "+what+" "+irel+" ("+to+")")
				}
			}
		}
		check(p.Imports, false)
		check(append(p.TestImports, p.XTestImports...), true)
	}
	return out
}

func listPackages(t *testing.T) []pkg {
	t.Helper()
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("no go command to list the packages")
	}
	cmd := exec.Command("go", "list", "-json", module+"/...")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, stderr.Bytes())
	}
	var pkgs []pkg
	dec := json.NewDecoder(bytes.NewReader(out))
	for {
		var p pkg
		if err := dec.Decode(&p); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			t.Fatalf("go list output: %v", err)
		}
		pkgs = append(pkgs, p)
	}
	if len(pkgs) < len(libraries) {
		t.Fatalf("go list found %d packages, want at least %d", len(pkgs), len(libraries))
	}
	return pkgs
}

func TestImportRule(t *testing.T) {
	for _, v := range violations(listPackages(t)) {
		t.Error(v)
	}
}

// TestRuleCatchesBreaks checks that the rule fails the imports it is for.
func TestRuleCatchesBreaks(t *testing.T) {
	tests := []struct {
		p    pkg
		want int
	}{
		{pkg{ImportPath: module + "/decoder", Imports: []string{module + "/dbc", module + "/frame"}}, 0},
		{pkg{ImportPath: module + "/decoder", Imports: []string{module + "/internal/cmdkit/valuelog"}}, 1},
		{pkg{ImportPath: module + "/pipeline", Imports: []string{module + "/service"}}, 1},
		{pkg{ImportPath: module + "/pipeline", TestImports: []string{module + "/service"}}, 1},
		{pkg{ImportPath: module + "/envelope", XTestImports: []string{module + "/benchmarks/report"}}, 1},
		{pkg{ImportPath: module + "/service", Imports: []string{module + "/internal/lab/demo"}}, 1},
		{pkg{ImportPath: module + "/service", Imports: []string{module + "/benchmarks"}}, 1},
		{pkg{ImportPath: module + "/service", TestImports: []string{module + "/internal/lab/mosquitto"}}, 0},
		{pkg{ImportPath: module + "/internal/lab/demo", Imports: []string{module + "/service", module + "/benchmarks/report"}}, 0},
		{pkg{ImportPath: module + "/cmd/candec", Imports: []string{module + "/internal/lab/demo", module + "/benchmarks"}}, 0},
		{pkg{ImportPath: module + "/stray", Imports: nil}, 1},
		{pkg{ImportPath: module + "/dbc", Imports: []string{module + "/internal/base/readfile"}}, 0},
		{pkg{ImportPath: module + "/service", Imports: []string{module + "/internal/base/readfile"}}, 0},
		{pkg{ImportPath: module + "/internal/base/readfile", Imports: []string{module + "/frame"}}, 1},
		{pkg{ImportPath: module + "/internal/base/readfile", Imports: []string{module + "/internal/base/numfmt"}}, 0},
		{pkg{ImportPath: module + "/internal/base/readfile", Imports: []string{module + "/internal/cmdkit/valuelog"}}, 1},
		{pkg{ImportPath: module + "/examples/subscriber", Imports: []string{module + "/envelope", module + "/mqttclient"}, TestImports: []string{module + "/internal/testkit/brokertest"}}, 0},
		{pkg{ImportPath: module + "/examples/subscriber", Imports: []string{module + "/internal/cmdkit/watch"}}, 1},
		{pkg{ImportPath: module + "/examples/subscriber", Imports: []string{module + "/service"}}, 1},
	}
	for _, tt := range tests {
		if got := violations([]pkg{tt.p}); len(got) != tt.want {
			t.Errorf("%s importing %v: got %d violations %q, want %d", tt.p.ImportPath, append(tt.p.Imports, append(tt.p.TestImports, tt.p.XTestImports...)...), len(got), got, tt.want)
		}
	}
}

// TestTopLevel checks that the top level has only the folders the layout
// names, and that the README's package table names every package folder.
func TestTopLevel(t *testing.T) {
	root := filepath.Join("..", "..", "..")
	entries, err := os.ReadDir(root)
	if err != nil {
		t.Fatal(err)
	}
	readme, err := os.ReadFile(filepath.Join(root, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		name := e.Name()
		if !e.IsDir() || strings.HasPrefix(name, ".") || name == "bin" || name == "dist" {
			continue
		}
		if !slices.Contains(topLevel, name) {
			t.Errorf("top-level folder %s/ is not in the layout (see the package documentation)", name)
		}
		if !bytes.Contains(readme, []byte("`"+name+"`")) && !bytes.Contains(readme, []byte("`"+name+"/`")) {
			t.Errorf("README.md does not name the top-level folder %s/", name)
		}
	}
}

// TestInternalFloorPlan checks that internal/ holds only its groups and
// that internal/README.md, the floor plan, names each group and each
// package in it, so that the plan reads from ls and stays true.
func TestInternalFloorPlan(t *testing.T) {
	dir := filepath.Join("..", "..")
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	plan, err := os.ReadFile(filepath.Join(dir, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		name := e.Name()
		if !e.IsDir() {
			if name != "README.md" {
				t.Errorf("internal/%s: internal/ holds only its groups' folders and README.md", name)
			}
			continue
		}
		if !slices.Contains(internalGroups, name) {
			t.Errorf("internal/%s/ is not one of the groups %v (internal/README.md)", name, internalGroups)
		}
		if !bytes.Contains(plan, []byte("`"+name+"/`")) {
			t.Errorf("internal/README.md does not name the group %s/", name)
		}
		members, err := os.ReadDir(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range members {
			if m.IsDir() && !bytes.Contains(plan, []byte(m.Name())) {
				t.Errorf("internal/README.md does not name %s/%s", name, m.Name())
			}
		}
	}
}
