package layout

import (
	"bytes"
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// carLeftOut are what the car's binary (go build -tags car ./cmd/candec)
// must not link, each a package path and everything below it: the bench
// harness, the demo and its embedded broker, plotting and Parquet. They
// run nowhere on the car; shipped, they are size, start-up time and
// attack surface.
var carLeftOut = []string{
	module + "/benchmarks",
	module + "/internal/demo",
	module + "/internal/broker",
	"github.com/mochi-mqtt/server",
	module + "/internal/plot",
	module + "/internal/chart",
	"gonum.org/v1/plot",
	module + "/internal/lake",
	"github.com/parquet-go/parquet-go",
}

// carViolations lists the packages of deps (a binary's dependencies)
// that the car's binary must not link.
func carViolations(deps []string) []string {
	return leftOutOf(deps, carLeftOut)
}

// binaryDeps lists the packages the candec binary of the build tags
// links.
func binaryDeps(t *testing.T, tags string) []string {
	t.Helper()
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("no go command to list the packages")
	}
	cmd := exec.Command("go", "list", "-deps", "-tags", tags, module+"/cmd/candec")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list -deps -tags %q: %v\n%s", tags, err, stderr.Bytes())
	}
	deps := strings.Fields(string(out))
	if len(deps) < 10 {
		t.Fatalf("go list -deps -tags %q: %d packages, want the binary's", tags, len(deps))
	}
	return deps
}

// TestCarBinary: the car's binary links none of carLeftOut.
func TestCarBinary(t *testing.T) {
	for _, v := range carViolations(binaryDeps(t, "car")) {
		t.Errorf("the car's binary (-tags car) links %s", v)
	}
}

// TestCarRuleCatchesBreaks checks that the car's rule fails what it is
// for: a package of each kind left out, and the developer's binary
// (no tag), which links them all.
func TestCarRuleCatchesBreaks(t *testing.T) {
	tests := []struct {
		deps []string
		want int
	}{
		{[]string{"fmt", module + "/dbc", module + "/service", module + "/internal/valuelog", "github.com/prometheus/client_golang/prometheus"}, 0},
		{[]string{module + "/benchmarks"}, 1},
		{[]string{module + "/benchmarks/report", module + "/benchmarksx"}, 1},
		{[]string{module + "/internal/broker", "github.com/mochi-mqtt/server/v2/hooks/auth"}, 2},
		{[]string{module + "/internal/chart", "gonum.org/v1/plot/vg/vgpdf"}, 2},
		{[]string{module + "/internal/lake", "github.com/parquet-go/parquet-go/compress/zstd"}, 2},
		{[]string{module + "/internal/lakes", "github.com/parquet-go/parquet-go-x"}, 0},
	}
	for _, tt := range tests {
		if got := carViolations(tt.deps); len(got) != tt.want {
			t.Errorf("%v: got %d violations %q, want %d", tt.deps, len(got), got, tt.want)
		}
	}
	dev := carViolations(binaryDeps(t, ""))
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

// leanLeftOut are what the lean build (go build -tags car,lean
// ./cmd/candec) must not link besides carLeftOut: what run, replay and
// watch need, which it leaves to its sibling candec-mqtt (the car's
// build). Their package initialisation, run whatever the command, is
// what kept decode and version from starting within twice a hello
// world's time: the service and the MQTT client, paho with
// gorilla/websocket, net/http and crypto/tls, the Prometheus client with
// protobuf, and the YAML v2 parser.
var leanLeftOut = []string{
	module + "/service",
	module + "/mqttclient",
	module + "/internal/replay",
	module + "/internal/watch",
	"github.com/eclipse/paho.golang",
	"github.com/gorilla/websocket",
	"github.com/prometheus",
	"google.golang.org/protobuf",
	"go.yaml.in/yaml/v2",
	"net/http",
	"crypto/tls",
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

// leanViolations lists the packages of deps that the lean binary must
// not link.
func leanViolations(deps []string) []string {
	return leftOutOf(deps, append(slices.Clip(carLeftOut), leanLeftOut...))
}

// TestLeanBinary: the lean binary (-tags car,lean) links none of
// carLeftOut and leanLeftOut.
func TestLeanBinary(t *testing.T) {
	for _, v := range leanViolations(binaryDeps(t, "car,lean")) {
		t.Errorf("the lean binary (-tags car,lean) links %s", v)
	}
}

// TestLeanRuleCatchesBreaks checks that the lean rule fails what it is
// for: a package of each kind left out, and the car's binary (-tags
// car), the lean build's sibling, which links them.
func TestLeanRuleCatchesBreaks(t *testing.T) {
	tests := []struct {
		deps []string
		want int
	}{
		{[]string{"fmt", module + "/dbc", module + "/pipeline", module + "/internal/decodejob", "go.yaml.in/yaml/v3", "net/netip", "crypto/sha256"}, 0},
		{[]string{module + "/service", module + "/mqttclient", module + "/internal/watch"}, 3},
		{[]string{"github.com/eclipse/paho.golang/autopaho", "github.com/gorilla/websocket", "github.com/prometheus/client_golang/prometheus"}, 3},
		{[]string{"net/http", "net/http/httptrace", "crypto/tls", "go.yaml.in/yaml/v2"}, 4},
		{[]string{module + "/benchmarks", "github.com/parquet-go/parquet-go"}, 2},
		{[]string{module + "/services", "net/httpx", "crypto/tlsx"}, 0},
	}
	for _, tt := range tests {
		if got := leanViolations(tt.deps); len(got) != tt.want {
			t.Errorf("%v: got %d violations %q, want %d", tt.deps, len(got), got, tt.want)
		}
	}
	car := leanViolations(binaryDeps(t, "car"))
	for _, p := range leanLeftOut {
		found := false
		for _, v := range car {
			found = found || strings.HasSuffix(v, "(under "+p+")")
		}
		if !found {
			t.Errorf("the car's binary: no violation under %s, want the rule to find it linked there", p)
		}
	}
}
