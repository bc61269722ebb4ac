package cli

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/yukart/candec/internal/lab/mosquitto"
)

// writeFile writes text to name in dir and returns its path.
func writeFile(t *testing.T, dir, name, text string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// unreachableURL is a broker URL where nothing listens.
func unreachableURL(t *testing.T) string {
	t.Helper()
	port, err := mosquitto.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	return "mqtt://127.0.0.1:" + strconv.Itoa(port)
}

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
