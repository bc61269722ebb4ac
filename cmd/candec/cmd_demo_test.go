package main

import (
	"bytes"
	"context"
	"strings"
	"testing"
)

// TestDemoCommand: `candec demo` works from a clone with nothing else:
// it finds the test data from cmd/candec too, and with its output not a
// terminal prints summary lines.
func TestDemoCommand(t *testing.T) {
	var out, stderr bytes.Buffer
	if err := run(context.Background(), env{nil, &out, &stderr}, []string{"demo", "--duration", "1500ms"}); err != nil {
		t.Fatalf("demo: %v\n%s", err, stderr.String())
	}
	if !strings.Contains(out.String(), "(the embedded broker)") || !strings.Contains(out.String(), "decoder offline") {
		t.Fatalf("demo output lacks the embedded broker or the final offline:\n%s", out.String())
	}
	err := run(context.Background(), env{nil, &out, &stderr}, []string{"demo", "--capture", "no/such.log"})
	if err == nil || !strings.Contains(err.Error(), "no/such.log") {
		t.Fatalf("missing capture: got %v; want an error naming it", err)
	}
}
