package main

import (
	"bytes"
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/eclipse/paho.golang/paho"

	"github.com/yukart/candec/benchmarks"
	"github.com/yukart/candec/internal/cmdkit/cli"
	"github.com/yukart/candec/internal/testkit/brokertest"
	"github.com/yukart/candec/mqttclient"
)

// brokerCommand is a command that reaches a broker, with the arguments
// of a short run: its own flags (which go after the connection flags)
// and its operands.
type brokerCommand struct {
	name      string
	flags     []string
	operands  []string
	connectTO bool // has --connect-timeout
}

// brokerCommands returns replay, watch, demo --broker and bench
// --broker, each as short as it can be and still connect and carry
// data. The bench runs one scenario of one second: its children are
// this test binary standing in for candec (TestMain), and it does not
// wait for a quiet machine.
func brokerCommands(t *testing.T) []brokerCommand {
	t.Helper()
	t.Setenv(asCandecEnv, "1")
	old := tuneBench
	tuneBench = func(c *benchmarks.Config) { c.IdleWait, c.ReadyTimeout = -1, 10*time.Second }
	t.Cleanup(func() { tuneBench = old })
	return []brokerCommand{
		{name: "replay", flags: []string{"--flood", "--json"}, operands: []string{shortCapture(t)}, connectTO: true},
		{name: "watch", flags: []string{"--duration", "500ms", "--quiet"}, connectTO: true},
		{name: "demo", flags: []string{"--duration", "3s"}, connectTO: true},
		{name: "bench", flags: []string{"--scenarios", tinyScenarios(t), "--profile", "tiny", "--no-results", "--logs", t.TempDir()}},
	}
}

// tinyScenarios writes a scenarios file whose profile tiny is the
// smallest real run: the car's capture at its own rate for a 1 s
// window after 200 ms of warm-up, one raw and one envelope subscriber.
func tinyScenarios(t *testing.T) string {
	t.Helper()
	abs := func(p string) string {
		a, err := filepath.Abs(p)
		if err != nil {
			t.Fatal(err)
		}
		return a
	}
	text := fmt.Sprintf(`defaults:
  duration: 1s
  warmup: 200ms
  raw_subscribers: 1
  envelope_subscribers: 1
capture: %s
loads:
  car: {label: car, speed: 1}
dbcs:
  yukart: {file: %s, label: car DBC}
policies:
  default: {label: default}
scenarios:
  - name: tiny
    load: car
    dbc: yukart
    policy: default
profiles:
  tiny:
    scenarios: [tiny]
`, abs(filepath.Join(filepath.Dir(yukartDBC), "idle.log")), abs(yukartDBC))
	return writeFile(t, t.TempDir(), "scenarios.yaml", text)
}

// limit bounds every command of these tests: the slowest, the bench,
// takes about 5 s; a hang is what it must never do.
const limit = 60 * time.Second

// runBroker runs c with the connection flags conn and returns its
// standard output, its standard error and its error; it fails the test
// when c takes longer than limit.
func runBroker(t *testing.T, c brokerCommand, conn ...string) (string, string, error) {
	t.Helper()
	args := append([]string{c.name}, conn...)
	if c.connectTO {
		args = append(args, "--connect-timeout", "20s")
	}
	args = append(append(args, c.flags...), c.operands...)
	ctx, cancel := context.WithTimeout(context.Background(), limit+10*time.Second)
	defer cancel()
	var stdout, stderr bytes.Buffer
	start := time.Now()
	err := run(ctx, cli.Env{Stdin: strings.NewReader(""), Stdout: &stdout, Stderr: &stderr}, args)
	if d := time.Since(start); d > limit {
		t.Errorf("%s took %v, want at most %v", c.name, d.Round(time.Millisecond), limit)
	} else {
		t.Logf("%s: %v", c.name, d.Round(time.Millisecond))
	}
	return stdout.String(), stderr.String(), err
}

// carried checks that c's output shows it carried data.
func carried(t *testing.T, c brokerCommand, stdout, stderr string) {
	t.Helper()
	var want string
	switch c.name {
	case "replay":
		want = `"frames":300`
	case "demo":
		want = "decoder offline" // the demo's decoder came online and went
	case "bench":
		want = `"scenario":"tiny"`
	default:
		return
	}
	if !strings.Contains(stdout, want) {
		t.Errorf("%s: stdout lacks %s:\n%s\nstderr:\n%s", c.name, want, stdout, stderr)
	}
}

// TestBrokerClientCert: every command that reaches a broker connects
// over mqtts:// with a client certificate, the user name being the
// certificate's, and without one is refused at once with one line.
func TestBrokerClientCert(t *testing.T) {
	b := brokertest.StartSecure(t, brokertest.Secure{ClientCert: true, IdentityAsUsername: true, User: "car"})
	certs := []string{"--broker", b.URL, "--ca-file", b.CAFile, "--cert-file", b.CertFile, "--key-file", b.KeyFile}
	for _, c := range brokerCommands(t) {
		t.Run(c.name, func(t *testing.T) {
			stdout, stderr, err := runBroker(t, c, certs...)
			if err != nil {
				t.Fatalf("with the client certificate: %v\n%s", err, stderr)
			}
			carried(t, c, stdout, stderr)

			start := time.Now()
			_, _, err = runBroker(t, c, "--broker", b.URL, "--ca-file", b.CAFile)
			oneLine(t, err, "asked for a client certificate and none was given")
			if d := time.Since(start); d > 10*time.Second {
				t.Errorf("took %v, want the refusal at once, not the 20s connect timeout", d)
			}
		})
	}
}

// TestBrokerTLSPasswordCommands: demo --broker and bench --broker reach
// a TLS broker with a user name and the password from CANDEC_PASSWORD,
// as replay and watch do (TestBrokerTLS, TestBrokerPassword).
func TestBrokerTLSPasswordCommands(t *testing.T) {
	b := brokertest.StartSecure(t, brokertest.Secure{TLS: true, User: "car", Password: "s3cret"})
	t.Setenv("CANDEC_PASSWORD", "s3cret")
	for _, c := range brokerCommands(t) {
		if c.name != "demo" && c.name != "bench" {
			continue
		}
		t.Run(c.name, func(t *testing.T) {
			stdout, stderr, err := runBroker(t, c, "--broker", b.URL, "--ca-file", b.CAFile, "--username", "car")
			if err != nil {
				t.Fatalf("over TLS with a password: %v\n%s", err, stderr)
			}
			carried(t, c, stdout, stderr)
		})
	}
}

// TestBrokerFailures: a wrong CA, a wrong password, a missing client
// certificate and a missing ACL right each end every command with one
// line that says which, and a non-zero exit, within the limit.
//
// The ACL is what a broker can be asked about. replay publishes at QoS
// 0, which mosquitto drops without a word when the user may not write
// the topic, so its first batch goes at QoS 1 and the PUBACK (0x87)
// ends the replay; the demo's probe is QoS 1 too; the bench fails on its
// replay's refusal. A missing read right is not observable: mosquitto
// 2.0 grants the SUBSCRIBE and delivers nothing, so watch ends cleanly
// with nothing seen (TestBrokerReadRightSilent).
func TestBrokerFailures(t *testing.T) {
	b := brokertest.StartSecure(t, brokertest.Secure{ClientCert: true, User: "car", Password: "s3cret"})
	acl := brokertest.StartSecure(t, brokertest.Secure{TLS: true, User: "car", Password: "s3cret",
		ACL: "user car\ntopic read yukart/#\ntopic write yukart/vehicle/#\ntopic write yukart/decoder/#\n"})
	good := []string{"--username", "car", "--ca-file", b.CAFile, "--cert-file", b.CertFile, "--key-file", b.KeyFile}
	for _, f := range []struct {
		name, password string
		conn           []string
		want           string
	}{
		{"wrong CA", "s3cret", []string{"--broker", b.URL, "--username", "car", "--ca-file", b.OtherCAFile, "--cert-file", b.CertFile, "--key-file", b.KeyFile}, "certificate signed by unknown authority"},
		{"wrong password", "wrong", append([]string{"--broker", b.URL}, good...), "not authorized"},
		{"no client certificate", "s3cret", []string{"--broker", b.URL, "--username", "car", "--ca-file", b.CAFile}, "asked for a client certificate and none was given"},
		{"no write right", "s3cret", []string{"--broker", acl.URL, "--username", "car", "--ca-file", acl.CAFile}, "not authorized"},
	} {
		t.Run(f.name, func(t *testing.T) {
			t.Setenv("CANDEC_PASSWORD", f.password)
			for _, c := range brokerCommands(t) {
				if c.name == "watch" && f.name == "no write right" {
					continue // watch writes nothing
				}
				t.Run(c.name, func(t *testing.T) {
					_, stderr, err := runBroker(t, c, f.conn...)
					if err == nil {
						t.Fatalf("got no error, want one saying %q\n%s", f.want, stderr)
					}
					oneLine(t, err, f.want)
				})
			}
		})
	}
}

// oneLine checks that err is one line containing want, with a non-zero
// exit status.
func oneLine(t *testing.T, err error, want string) {
	t.Helper()
	t.Logf("error: %v", err)
	if err == nil || cli.ExitCode(err) == 0 || strings.Contains(err.Error(), "\n") || !strings.Contains(err.Error(), want) {
		t.Errorf("got %q (exit %d), want one line saying %q and a non-zero exit", err, cli.ExitCode(err), want)
	}
}

// TestBrokerReadRightSilent pins what a missing read right looks like:
// mosquitto 2.0 grants the SUBSCRIBE and drops every message, so watch
// connects, sees nothing and exits 0. (A broker that refuses the
// SUBSCRIBE ends watch with an error naming the filter instead.)
func TestBrokerReadRightSilent(t *testing.T) {
	b := brokertest.StartSecure(t, brokertest.Secure{TLS: true, User: "car", Password: "s3cret", ACL: "user car\ntopic write secret/#\ntopic readwrite open/#\n"})
	t.Setenv("CANDEC_PASSWORD", "s3cret")
	settings := mqttclient.Settings{Broker: b.URL, ClientID: "writer", Username: "car", Password: "s3cret", CAFile: b.CAFile}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	at := mqttclient.NewAttempts()
	cm, err := mqttclient.Connect(ctx, mqttclient.Config{Settings: settings, OnConnectError: at.Record})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { cancel(); <-cm.Done() }()
	if err := at.Await(ctx, cm, b.URL, 5*time.Second); err != nil {
		t.Fatal(err)
	}
	go func() {
		for ctx.Err() == nil {
			for _, topic := range []string{"secret/x", "open/x"} {
				_, _ = cm.Publish(ctx, &paho.Publish{Topic: topic, QoS: 1, Payload: []byte("1")})
			}
			time.Sleep(20 * time.Millisecond)
		}
	}()
	for _, tc := range []struct {
		filter string
		seen   bool
	}{{"open/#", true}, {"secret/#", false}} {
		var stdout, stderr bytes.Buffer
		err := run(ctx, cli.Env{Stdin: nil, Stdout: &stdout, Stderr: &stderr}, []string{"watch", "--broker", b.URL, "--username", "car", "--ca-file", b.CAFile, "--duration", "1s", "--json", tc.filter})
		if err != nil && !strings.Contains(err.Error(), "refused the subscription") {
			t.Fatalf("watch %s: %v\n%s", tc.filter, err, stderr.String())
		}
		if seen := strings.Contains(stdout.String(), `"topic":"`); err == nil && seen != tc.seen {
			t.Errorf("watch %s: saw a topic %v, want %v:\n%s", tc.filter, seen, tc.seen, stdout.String())
		}
	}
}
