package cli

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/yukart/candec/internal/testkit/brokertest"
)

// TestRunBadConfig: a bad config stops start-up with one line naming
// where, the key and what is wrong, and a non-zero exit.
func TestRunBadConfig(t *testing.T) {
	dir := t.TempDir()
	conf := filepath.Join(dir, "candec.yaml")
	if err := os.WriteFile(conf, []byte("dbc: ../../testdata/yukart.dbc\nqos: 2\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	badDBC := filepath.Join(dir, "bad.dbc")
	if err := os.WriteFile(badDBC, []byte("VERSION \"\"\nBO_ x\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	// A config file elsewhere names its files relative to itself.
	etc := filepath.Join(dir, "etc")
	if err := os.MkdirAll(etc, 0o700); err != nil {
		t.Fatal(err)
	}
	car, err := os.ReadFile("../../../testdata/yukart.dbc")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(etc, "car.dbc"), car, 0o600); err != nil {
		t.Fatal(err)
	}
	missingDBC := filepath.Join(etc, "missing.yaml")
	missingPolicy := filepath.Join(etc, "policy.yaml")
	for name, text := range map[string]string{missingDBC: "dbc: gone.dbc\n", missingPolicy: "dbc: car.dbc\npolicy: pol.yaml\n"} {
		if err := os.WriteFile(name, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range []struct {
		name string
		env  map[string]string
		args []string
		want string
	}{
		{"relative DBC names the config file", nil, []string{"--config", missingDBC}, missingDBC + ":1: dbc: open " + filepath.Join(etc, "gone.dbc")},
		{"relative DBC found beside the config; relative policy names it", nil, []string{"--config", missingPolicy},
			missingPolicy + ":2: pipeline: load policy: open " + filepath.Join(etc, "pol.yaml")},
		{"broker without scheme", nil, []string{"--config", conf, "--qos", "0", "--broker", "127.0.0.1:1883"},
			`flag --broker: broker: bad broker URL "127.0.0.1:1883": must be mqtt://host:port or mqtts://host:port`},
		{"misspelt variable", map[string]string{"CANDEC_BORKER": "mqtt://x"}, []string{"--dbc", "x.dbc"},
			"environment CANDEC_BORKER: borker: unknown variable; did you mean CANDEC_BROKER?"},
		{"file", nil, []string{"--config", conf}, conf + ":2: qos: must be 0 or 1, got 2"},
		{"flag fixes the file", nil, []string{"--config", conf, "--qos", "1", "--broker", "ftp://x"}, `flag --broker: broker: bad broker URL "ftp://x"`},
		{"environment", map[string]string{"CANDEC_CLOCK_LAG": "soon"}, []string{"--dbc", "x.dbc"}, `environment CANDEC_CLOCK_LAG: clock_lag: not a duration`},
		{"missing DBC", nil, []string{"--dbc", filepath.Join(dir, "none.dbc")}, filepath.Join(dir, "none.dbc")},
		{"bad DBC", nil, []string{"--dbc", badDBC}, badDBC + ":2:"},
		{"raw topic takes in the decoder's own", nil, []string{"--dbc", "../../../testdata/yukart.dbc", "--raw-topic", "#"}, `flag --raw-topic: raw_topic: "#" matches the status_topic "yukart/decoder/status"`},
		{"missing policy", nil, []string{"--dbc", "../../../testdata/yukart.dbc", "--policy", filepath.Join(dir, "p.yaml")}, filepath.Join(dir, "p.yaml")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for k, v := range tc.env {
				t.Setenv(k, v)
			}
			var stderr bytes.Buffer
			err := run(context.Background(), Env{nil, &bytes.Buffer{}, &stderr}, append([]string{"run"}, tc.args...))
			if err == nil {
				t.Fatal("run started; want a start-up error")
			}
			if ExitCode(err) == 0 || strings.Contains(err.Error(), "\n") || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("got %q (exit %d); want one line containing %q and a non-zero exit", err, ExitCode(err), tc.want)
			}
		})
	}
}

// TestRunServes: `candec run` against mosquitto says online, and ends
// cleanly (nil, offline) when its context ends, as on SIGTERM.
func TestRunServes(t *testing.T) {
	b := brokertest.Start(t)
	sub := brokertest.Connect(t, b.URL)
	sub.Subscribe("yukart/decoder/status")
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	var stderr bytes.Buffer
	go func() {
		done <- run(ctx, Env{nil, &bytes.Buffer{}, &stderr}, []string{"run",
			"--broker", b.URL, "--dbc", "../../../testdata/yukart.dbc", "--metrics-addr", "", "--client-id", "cmd-run-test"})
	}()
	sub.WaitFor("online", func(m []brokertest.Message) bool { return len(m) > 0 && string(m[len(m)-1].Payload) == "online" })
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("run returned %v after a clean stop; want nil (exit 0)\n%s", err, stderr.String())
		}
	case <-time.After(20 * time.Second):
		t.Fatal("run did not stop")
	}
	sub.WaitFor("offline", func(m []brokertest.Message) bool { return string(m[len(m)-1].Payload) == "offline" })
	if !strings.Contains(stderr.String(), "level=INFO msg=connected") {
		t.Errorf("the log lacks the connection line:\n%s", stderr.String())
	}
	if strings.Contains(stderr.String(), "shutdown_timeout reached") {
		t.Errorf("a clean stop says the shutdown ran out of time:\n%s", stderr.String())
	}
}

// TestRunHelp: `run -h` names each flag's value and shows its default.
func TestRunHelp(t *testing.T) {
	var stderr bytes.Buffer // the help goes to stdout
	err := run(context.Background(), Env{nil, &stderr, &bytes.Buffer{}}, []string{"run", "-h"})
	if err != nil && !errors.Is(err, flag.ErrHelp) {
		t.Fatalf("run -h: got %v, want the help", err)
	}
	for _, want := range []string{"-broker URL\n", "(default mqtt://127.0.0.1:1883)", "-reconnect-max duration\n", "(default 5s)", "-qos QoS\n", "(default 0)"} {
		if !strings.Contains(stderr.String(), want) {
			t.Errorf("run -h lacks %q:\n%s", want, stderr.String())
		}
	}
	if strings.Contains(stderr.String(), " value\n") {
		t.Errorf("run -h shows a bare \"value\" placeholder:\n%s", stderr.String())
	}
}
