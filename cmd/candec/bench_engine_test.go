package main

import (
	"strings"
	"testing"
)

// TestBenchEngineFlags: bench --fleet's cloud-tier flags refuse what
// they cannot run, before any car is made, with exit 2 and the flag's
// name.
func TestBenchEngineFlags(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--engine", "kafka"}, "--engine"},
		{[]string{"--engine", "nats", "--nodes", "2"}, "--nodes"},
		{[]string{"--engine", "nats", "--nodes", "10"}, "--nodes"},
		{[]string{"--nodes", "5"}, "need --engine nats"},
		{[]string{"--kill-node", "1"}, "need --engine nats"},
		{[]string{"--engine", "nats", "--kill-node", "4"}, "--kill-node"},
		{[]string{"--engine", "nats", "--kill-node", "0"}, "--kill-node"},
		{[]string{"--engine", "nats", "--kill-node", "follower"}, "--kill-node"},
	} {
		args := append([]string{"bench", "--fleet", "2", "--no-results"}, tc.args...)
		_, stderr, code := runCmd(t, args...)
		if code != 2 || !strings.Contains(stderr, tc.want) {
			t.Errorf("candec %s: exit %d, want 2 with %q:\n%s", strings.Join(args, " "), code, tc.want, stderr)
		}
	}
	_, stderr, code := runCmd(t, "bench", "--engine", "nats")
	if code != 2 || !strings.Contains(stderr, "--engine needs --fleet N") {
		t.Errorf("candec bench --engine nats (no --fleet): exit %d, want 2 with %q:\n%s", code, "--engine needs --fleet N", stderr)
	}
}
