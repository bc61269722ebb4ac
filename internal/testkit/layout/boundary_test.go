package layout

import (
	"slices"
	"strings"
	"testing"
)

// boundary is an import a library must not make, in its own code, even
// though the tiers would allow it: what it would drag into every program
// that imports the library.
type boundary struct {
	from string // the package, relative to the module
	to   string // the import path it must not import
	why  string
}

// boundaries are the libraries' edges the tiers do not see.
var boundaries = []boundary{
	{"mqttclient", "flag", "a program that imports mqttclient would inherit candec's flags and variables: they are the binary's (internal/cmdkit/brokerflags)"},
	{"pipeline", module + "/capture", "the engine takes frames from a pipeline.Source; the service would link every capture reader"},
}

// boundaryViolations lists the imports of pkgs that cross a boundary.
func boundaryViolations(pkgs []pkg) []string {
	var out []string
	for _, p := range pkgs {
		rel, ok := strings.CutPrefix(p.ImportPath, module+"/")
		if !ok {
			continue
		}
		for _, b := range boundaries {
			if b.from == rel && slices.Contains(p.Imports, b.to) {
				out = append(out, rel+" imports "+b.to+": "+b.why)
			}
		}
	}
	return out
}

// TestBoundaries checks the libraries' edges: mqttclient imports no
// flag, pipeline no capture.
func TestBoundaries(t *testing.T) {
	for _, v := range boundaryViolations(listPackages(t)) {
		t.Error(v)
	}
}

// TestBoundariesCatchBreaks checks that each boundary fails the import
// it is for, and only in the package's own code.
func TestBoundariesCatchBreaks(t *testing.T) {
	tests := []struct {
		p    pkg
		want int
	}{
		{pkg{ImportPath: module + "/mqttclient", Imports: []string{"context", "net"}}, 0},
		{pkg{ImportPath: module + "/mqttclient", Imports: []string{"context", "flag"}}, 1},
		{pkg{ImportPath: module + "/mqttclient", TestImports: []string{"flag"}}, 0},
		{pkg{ImportPath: module + "/internal/cmdkit/brokerflags", Imports: []string{"flag", module + "/mqttclient"}}, 0},
		{pkg{ImportPath: module + "/pipeline", Imports: []string{module + "/frame", module + "/decoder"}}, 0},
		{pkg{ImportPath: module + "/pipeline", Imports: []string{module + "/capture"}}, 1},
		{pkg{ImportPath: module + "/pipeline", XTestImports: []string{module + "/capture"}}, 0},
		{pkg{ImportPath: module + "/service", Imports: []string{module + "/capture", "flag"}}, 0},
	}
	for _, tt := range tests {
		if got := boundaryViolations([]pkg{tt.p}); len(got) != tt.want {
			t.Errorf("%s importing %v: got %d violations %q, want %d", tt.p.ImportPath, append(tt.p.Imports, append(tt.p.TestImports, tt.p.XTestImports...)...), len(got), got, tt.want)
		}
	}
}
