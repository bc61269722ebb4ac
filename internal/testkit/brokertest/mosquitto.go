package brokertest

import (
	"context"
	"os"
	"testing"

	"github.com/yukart/candec/internal/lab/mosquitto"
)

// RequireMosquitto returns the path of the mosquitto binary. Without it
// the test is skipped, or fails when RequireEnv is 1: for tests that
// need the real broker (its configuration, plugins, bridges), where the
// embedded one will not do.
func RequireMosquitto(t testing.TB) string {
	t.Helper()
	exe, _ := findMosquitto()
	if exe == "" {
		if os.Getenv(RequireEnv) == "1" {
			t.Fatalf("brokertest: mosquitto not found and %s=1 (install the Debian package mosquitto)", RequireEnv)
		}
		t.Skip("brokertest: mosquitto not found (install the Debian package mosquitto)")
	}
	return exe
}

// StartMosquitto starts mosquitto as o says (package internal/lab/mosquitto:
// a free port unless o.Port; o.Dir, when empty, a temporary directory of
// the test), waits until it serves and stops it when the test ends, with
// the end of its log in the test's output when the test failed. Without
// mosquitto the test is skipped, or fails when RequireEnv is 1
// (RequireMosquitto).
func StartMosquitto(t testing.TB, o mosquitto.Options) *mosquitto.Process {
	t.Helper()
	if o.Binary == "" {
		o.Binary = RequireMosquitto(t)
	}
	if o.Dir == "" {
		o.Dir = t.TempDir()
	}
	p, err := mosquitto.Start(context.Background(), o)
	if err != nil {
		t.Fatalf("brokertest: %v", err)
	}
	t.Cleanup(func() {
		_ = p.Stop(StopTimeout)
		if t.Failed() {
			t.Logf("brokertest: last lines of %s:\n%s", p.Log, mosquitto.LogTail(o.Dir, 30))
		}
	})
	return p
}
