package cli

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/yukart/candec/internal/testkit"
	"github.com/yukart/candec/internal/testkit/brokertest"
)

// TestRunReloadsOnSIGHUP: a real SIGHUP makes `candec run` read its
// policy file again: a bad file is logged with its file and line and
// the service goes on; a good one is applied.
func TestRunReloadsOnSIGHUP(t *testing.T) {
	b := brokertest.Start(t)
	sub := brokertest.Connect(t, b.URL)
	sub.Subscribe("yukart/decoder/status")
	pol := filepath.Join(t.TempDir(), "policy.yaml")
	if err := os.WriteFile(pol, []byte("defaults:\n  max_rate: 1\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	var stderr testkit.SyncBuffer
	go func() {
		done <- run(ctx, Env{nil, &bytes.Buffer{}, &stderr}, []string{"run", "--broker", b.URL, "--dbc", "../../../testdata/yukart.dbc",
			"--policy", pol, "--metrics-addr", "", "--client-id", "cmd-run-hup-test"})
	}()
	// run listens for SIGHUP before it connects.
	sub.WaitFor("online", func(m []brokertest.Message) bool { return len(m) > 0 && string(m[len(m)-1].Payload) == "online" })
	waitLog := func(want string) {
		t.Helper()
		deadline := time.Now().Add(10 * time.Second)
		for !strings.Contains(stderr.String(), want) {
			if time.Now().After(deadline) {
				t.Fatalf("the log never said %q:\n%s", want, stderr.String())
			}
			time.Sleep(5 * time.Millisecond)
		}
	}
	hup := func(text string) {
		t.Helper()
		if err := os.WriteFile(pol, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := syscall.Kill(os.Getpid(), syscall.SIGHUP); err != nil {
			t.Fatal(err)
		}
	}
	hup("defaults:\n  max_rate: -1\n")
	waitLog(pol + ":2:13: max_rate: must not be negative")
	hup("defaults:\n  max_rate: 10\n")
	waitLog("policy reloaded: ")
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("run returned %v after a clean stop\n%s", err, stderr.String())
		}
	case <-time.After(20 * time.Second):
		t.Fatal("run did not stop")
	}
	if !strings.Contains(stderr.String(), "policy reload failed; the running policy stays") {
		t.Errorf("the log does not say the bad file was refused:\n%s", stderr.String())
	}
}
