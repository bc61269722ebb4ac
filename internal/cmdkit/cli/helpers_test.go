package cli

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"github.com/yukart/candec/internal/testkit"
)

// writeFile and unreachableURL are testkit's, under the names these
// tests call them by.
var (
	writeFile      = testkit.WriteFile
	unreachableURL = testkit.UnreachableURL
)

// checkUnreachable runs command against a broker that does not answer,
// with args after the broker and a --connect-timeout of 300ms: it must
// fail within about that timeout with an error naming the broker, the
// timeout and the refused connection, and print nothing (no summary).
func checkUnreachable(t *testing.T, command string, args ...string) {
	t.Helper()
	url := unreachableURL(t)
	var stdout, stderr bytes.Buffer
	start := time.Now()
	err := run(context.Background(), Env{nil, &stdout, &stderr}, append([]string{command, "--broker", url, "--connect-timeout", "300ms"}, args...))
	if err == nil || ExitCode(err) == 0 || !strings.Contains(err.Error(), "no connection to "+url+" within 300ms") || !strings.Contains(err.Error(), "connection refused") {
		t.Fatalf("got %v, want an error naming %s, the timeout and the refused connection", err, url)
	}
	if d := time.Since(start); d > 3*time.Second {
		t.Errorf("took %v, want about the 300ms timeout", d)
	}
	if stdout.Len() != 0 || stderr.Len() != 0 {
		t.Errorf("printed %q on stdout and %q on stderr, want no summary", stdout.String(), stderr.String())
	}
}

// run runs the command of args in the car's table, as the car's binary
// does; the developer's commands are cmd/candec's tests'.
func run(ctx context.Context, e Env, args []string) error { return Execute(ctx, e, Car, args) }
