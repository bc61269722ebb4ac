package layout

import (
	"bytes"
	"os/exec"
	"strings"
	"testing"
)

// carLeftOut are what the car's binary (cmd/candec-car, installed by
// the .deb) must not link, each a package path and everything below it:
// the bench harness, the demo and its embedded broker, plotting, the
// tuner, the cloud's ingest and Parquet. They run nowhere on the car;
// shipped, they are size, start-up time and attack surface.
var carLeftOut = []string{
	module + "/benchmarks",
	module + "/internal/lab/demo",
	module + "/internal/lab/broker",
	"github.com/mochi-mqtt/server",
	module + "/internal/lab/plot",
	module + "/internal/lab/chart",
	"gonum.org/v1/plot",
	module + "/internal/tune",
	module + "/internal/fleet/ingest",
	module + "/internal/cmdkit/outformat/parquetrow",
	module + "/internal/fleet/lake",
	"github.com/parquet-go/parquet-go",
}

// carViolations lists the packages of deps (a binary's dependencies)
// that the car's binary must not link.
func carViolations(deps []string) []string {
	return leftOutOf(deps, carLeftOut)
}

// binaryDeps lists the packages the binary of the main package main
// (cmd/candec, cmd/candec-car) links: go list -deps, no build tags.
func binaryDeps(t *testing.T, main string) []string {
	t.Helper()
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("no go command to list the packages")
	}
	cmd := exec.Command("go", "list", "-deps", module+"/"+main)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list -deps %s: %v\n%s", main, err, stderr.Bytes())
	}
	deps := strings.Fields(string(out))
	if len(deps) < 10 {
		t.Fatalf("go list -deps %s: %d packages, want the binary's", main, len(deps))
	}
	return deps
}

// TestCarBinary: the car's binary (cmd/candec-car) links none of
// carLeftOut.
func TestCarBinary(t *testing.T) {
	for _, v := range carViolations(binaryDeps(t, "cmd/candec-car")) {
		t.Errorf("the car's binary (cmd/candec-car) links %s", v)
	}
}

// TestCarRuleCatchesBreaks checks that the car's rule fails what it is
// for: a package of each kind left out, and the developer's binary
// (cmd/candec), which links them all.
func TestCarRuleCatchesBreaks(t *testing.T) {
	tests := []struct {
		deps []string
		want int
	}{
		{[]string{"fmt", module + "/dbc", module + "/service", module + "/internal/cmdkit/valuelog", "github.com/prometheus/client_golang/prometheus"}, 0},
		{[]string{module + "/benchmarks"}, 1},
		{[]string{module + "/benchmarks/report", module + "/benchmarksx"}, 1},
		{[]string{module + "/internal/lab/broker", "github.com/mochi-mqtt/server/v2/hooks/auth"}, 2},
		{[]string{module + "/internal/lab/chart", "gonum.org/v1/plot/vg/vgpdf"}, 2},
		{[]string{module + "/internal/fleet/lake", "github.com/parquet-go/parquet-go/compress/zstd"}, 2},
		{[]string{module + "/internal/lakes", "github.com/parquet-go/parquet-go-x"}, 0},
	}
	for _, tt := range tests {
		if got := carViolations(tt.deps); len(got) != tt.want {
			t.Errorf("%v: got %d violations %q, want %d", tt.deps, len(got), got, tt.want)
		}
	}
	dev := carViolations(binaryDeps(t, "cmd/candec"))
	for _, p := range carLeftOut {
		found := false
		for _, v := range dev {
			found = found || strings.HasSuffix(v, "(under "+p+")")
		}
		if !found {
			t.Errorf("the developer's binary: no violation under %s, want the rule to find it linked there", p)
		}
	}
}

// leftOutOf lists the packages of deps (a binary's dependencies) under
// one of leftOut: each a package path and everything below it.
func leftOutOf(deps, leftOut []string) []string {
	var out []string
	for _, d := range deps {
		for _, p := range leftOut {
			if d == p || strings.HasPrefix(d, p+"/") {
				out = append(out, d+" (under "+p+")")
				break
			}
		}
	}
	return out
}
