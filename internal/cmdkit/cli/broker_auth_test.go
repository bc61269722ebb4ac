package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/yukart/candec/internal/cmdkit/replay"
	"github.com/yukart/candec/internal/testkit/brokertest"
)

// shortCapture writes the first lines of the car's idle capture.
func shortCapture(t *testing.T) string {
	t.Helper()
	idle, err := os.ReadFile(filepath.Join(filepath.Dir(yukartDBC), "idle.log"))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.SplitAfterN(string(idle), "\n", 301)
	return writeFile(t, t.TempDir(), "short.log", strings.Join(lines[:300], ""))
}

// replayed runs replay with args and returns its counts.
func replayed(t *testing.T, args ...string) (replay.Stats, error) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	err := run(context.Background(), Env{nil, &stdout, &stderr}, append([]string{"replay", "--flood", "--json"}, args...))
	var st replay.Stats
	if err == nil {
		if jerr := json.Unmarshal(stdout.Bytes(), &st); jerr != nil {
			t.Fatalf("%v in %q", jerr, stdout.String())
		}
	}
	return st, err
}

// TestBrokerPassword: replay and watch reach a broker that wants a user
// name and password, the password from CANDEC_PASSWORD; a wrong one is a
// one-line error at once, not a wait for the connect timeout.
func TestBrokerPassword(t *testing.T) {
	b := brokertest.StartSecure(t, brokertest.Secure{User: "car", Password: "s3cret"})
	capture := shortCapture(t)

	t.Setenv("CANDEC_PASSWORD", "s3cret")
	st, err := replayed(t, "--broker", b.URL, "--username", "car", capture)
	if err != nil || st.Frames == 0 {
		t.Fatalf("replay with the right password: %v, %d frames; want the capture sent", err, st.Frames)
	}
	var out bytes.Buffer
	if err := run(context.Background(), Env{nil, &out, &out}, []string{"watch", "--broker", b.URL, "--username", "car", "--duration", "500ms", "--quiet"}); err != nil {
		t.Fatalf("watch with the right password: %v\n%s", err, out.String())
	}

	for _, tc := range []struct {
		name, password string
		args           []string
	}{
		{"wrong password", "wrong", []string{"--username", "car"}},
		{"no user", "", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv("CANDEC_PASSWORD", tc.password)
			start := time.Now()
			_, err := replayed(t, append(append([]string{"--broker", b.URL, "--connect-timeout", "20s"}, tc.args...), capture)...)
			if err == nil || ExitCode(err) == 0 || strings.Contains(err.Error(), "\n") || !strings.Contains(err.Error(), "refused the connection") || !strings.Contains(err.Error(), b.URL) {
				t.Fatalf("got %v (exit %d), want one line saying %s refused the connection, and a non-zero exit", err, ExitCode(err), b.URL)
			}
			if d := time.Since(start); d > 5*time.Second {
				t.Errorf("took %v, want the refusal at once, not the 20s connect timeout", d)
			}
		})
	}
}

// TestBrokerTLS: replay and watch reach an mqtts:// broker whose
// certificate a CA of --ca-file signed; without it the certificate is
// refused.
func TestBrokerTLS(t *testing.T) {
	b := brokertest.StartSecure(t, brokertest.Secure{TLS: true, User: "car", Password: "s3cret"})
	if !strings.HasPrefix(b.URL, "mqtts://") {
		t.Fatalf("URL %s, want mqtts://", b.URL)
	}
	capture := shortCapture(t)
	t.Setenv("CANDEC_PASSWORD", "s3cret")
	t.Setenv("CANDEC_USERNAME", "car")
	st, err := replayed(t, "--broker", b.URL, "--ca-file", b.CAFile, capture)
	if err != nil || st.Frames == 0 {
		t.Fatalf("replay over TLS: %v, %d frames; want the capture sent", err, st.Frames)
	}
	var out bytes.Buffer
	if err := run(context.Background(), Env{nil, &out, &out}, []string{"watch", "--broker", b.URL, "--ca-file", b.CAFile, "--duration", "500ms", "--quiet"}); err != nil {
		t.Fatalf("watch over TLS: %v\n%s", err, out.String())
	}

	_, err = replayed(t, "--broker", b.URL, "--connect-timeout", "1s", capture)
	if err == nil || !strings.Contains(err.Error(), "certificate") {
		t.Errorf("without --ca-file: got %v, want the broker's certificate refused", err)
	}
	_, err = replayed(t, "--broker", b.URL, "--ca-file", "/nonexistent/ca.pem", capture)
	if err == nil || ExitCode(err) != 2 || !strings.Contains(err.Error(), "/nonexistent/ca.pem") {
		t.Errorf("missing --ca-file: got %v (exit %d), want an error naming the file and exit 2", err, ExitCode(err))
	}
}
