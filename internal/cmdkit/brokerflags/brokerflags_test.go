package brokerflags

import (
	"errors"
	"flag"
	"io"
	"os"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/yukart/candec/internal/base/flagenv"
	"github.com/yukart/candec/mqttclient"
)

// TestFlagsPrecedence: defaults < CANDEC_ variables < flags, for every
// setting that has a flag; the password only from the environment, and
// CANDEC_CLIENT_ID left to `candec run`.
func TestFlagsPrecedence(t *testing.T) {
	for _, tc := range []struct {
		name    string
		environ []string
		args    []string
		want    mqttclient.Settings
	}{
		{"defaults", nil, nil, mqttclient.DefaultSettings("me")},
		{"env over default", []string{"CANDEC_BROKER=mqtt://env:1", "CANDEC_USERNAME=u", "CANDEC_PASSWORD=p", "CANDEC_KEEPALIVE=10s", "PATH=/bin"}, nil,
			mqttclient.Settings{Broker: "mqtt://env:1", ClientID: "me", Username: "u", Password: "p", KeepAlive: 10 * time.Second}},
		{"flag over env", []string{"CANDEC_BROKER=mqtt://env:1", "CANDEC_KEEPALIVE=10s"}, []string{"--broker", "mqtts://flag", "--keepalive", "1m", "--client-id", "car7"},
			mqttclient.Settings{Broker: "mqtts://flag", ClientID: "car7", KeepAlive: time.Minute}},
		{"TLS files", nil, []string{"--broker", "mqtts://b", "--ca-file", "ca.pem", "--cert-file", "c.pem", "--key-file", "c.key"},
			mqttclient.Settings{Broker: "mqtts://b", ClientID: "me", CAFile: "ca.pem", CertFile: "c.pem", KeyFile: "c.key", KeepAlive: mqttclient.DefaultKeepAlive}},
		{"CANDEC_CLIENT_ID is run's", []string{"CANDEC_CLIENT_ID=candec"}, nil, mqttclient.DefaultSettings("me")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fs := flag.NewFlagSet("x", flag.ContinueOnError)
			f := AddFlags(fs, mqttclient.DefaultSettings("me"))
			if err := fs.Parse(tc.args); err != nil {
				t.Fatal(err)
			}
			got, err := f.Settings(tc.environ)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("got %+v, want %+v", got, tc.want)
			}
		})
	}
}

// TestFlagsErrors: a bad value is refused naming the flag or the
// variable that gave it.
func TestFlagsErrors(t *testing.T) {
	for _, tc := range []struct {
		name    string
		environ []string
		args    []string
		want    string
	}{
		{"keepalive not a duration", nil, []string{"--keepalive", "soon"}, `invalid value "soon" for flag -keepalive: not a duration`},
		{"keepalive 0", nil, []string{"--keepalive", "0s"}, "flag -keepalive: must be whole seconds from 1s to 18h12m15s, got 0s"},
		{"keepalive negative", nil, []string{"--keepalive", "-1s"}, "flag -keepalive: must be whole seconds"},
		{"keepalive fraction", nil, []string{"--keepalive", "1500ms"}, "flag -keepalive: must be whole seconds"},
		{"keepalive too long", nil, []string{"--keepalive", "19h"}, "flag -keepalive: must be whole seconds"},
		{"keepalive from env", []string{"CANDEC_KEEPALIVE=1x"}, nil, `CANDEC_KEEPALIVE: not a duration (like 100ms or 5s): "1x"`},
		{"bad URL", nil, []string{"--broker", "localhost:1883"}, `--broker: bad broker URL "localhost:1883": must be mqtt://host:port or mqtts://host:port`},
		{"bad URL from env", []string{"CANDEC_BROKER=http://x"}, nil, `CANDEC_BROKER: bad broker URL "http://x": scheme must be`},
		{"CA file on mqtt://", nil, []string{"--ca-file", "ca.pem"}, "--ca-file: needs an mqtts:// broker URL, got mqtt://127.0.0.1:1883"},
		{"key without cert", nil, []string{"--broker", "mqtts://b", "--key-file", "k.pem"}, "--key-file: needs cert_file too"},
		{"empty client id", nil, []string{"--client-id", ""}, "--client-id: must not be empty"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fs := flag.NewFlagSet("x", flag.ContinueOnError)
			fs.SetOutput(io.Discard)
			f := AddFlags(fs, mqttclient.DefaultSettings("me"))
			err := fs.Parse(tc.args)
			if err == nil {
				_, err = f.Settings(tc.environ)
			}
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("got %v, want it to contain %q", err, tc.want)
			}
		})
	}
}

func TestFlagsHelp(t *testing.T) {
	fs := flag.NewFlagSet("x", flag.ContinueOnError)
	AddFlags(fs, mqttclient.DefaultSettings("me"))
	for _, name := range []string{"broker", "client-id", "username", "ca-file", "cert-file", "key-file", "keepalive"} {
		if fs.Lookup(name) == nil {
			t.Errorf("no flag --%s", name)
		}
	}
	if fs.Lookup("password") != nil {
		t.Error("a --password flag: a command line is visible to every user")
	}
	if got := fs.Lookup("keepalive").DefValue; got != "30s" {
		t.Errorf("--keepalive default %q, want 30s", got)
	}
}

// TestArgs: the flags Args gives set the same settings again, but for
// the client id and the password.
func TestArgs(t *testing.T) {
	in := mqttclient.Settings{Broker: "mqtts://b:1", ClientID: "x", Username: "u", Password: "secret", CAFile: "/ca.pem", CertFile: "/c.pem", KeyFile: "/c.key", KeepAlive: time.Minute}
	args := Args(in)
	if strings.Contains(strings.Join(args, " "), "secret") {
		t.Fatalf("args %q carry the password", args)
	}
	fs := flag.NewFlagSet("x", flag.ContinueOnError)
	f := AddFlags(fs, mqttclient.DefaultSettings("y"))
	if err := fs.Parse(args); err != nil {
		t.Fatal(err)
	}
	got, err := f.Settings([]string{"CANDEC_PASSWORD=secret"})
	if err != nil {
		t.Fatal(err)
	}
	want := in
	want.ClientID = "y"
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %+v, want %+v", got, want)
	}
}

// addedKey is a setting added to mqttclient's table: a test row that
// keeps its value in *v.
func addedKey(v *string) mqttclient.Key {
	return mqttclient.Key{
		Name: "added_key", Help: "an added `thing`", Default: "def",
		Set: func(_ *mqttclient.Settings, s string) error {
			if s == "bad" {
				return errors.New("not a thing")
			}
			*v = s
			return nil
		},
		Get: func(*mqttclient.Settings) string { return *v },
	}
}

// TestAddedKeyReachesFlagAndVariable: a row added to the table is a
// flag with its help and default, a variable under it, a refusal naming
// either, and an argument Args gives a child, with no other edit.
func TestAddedKeyReachesFlagAndVariable(t *testing.T) {
	var v string
	keys := append(mqttclient.Keys(), addedKey(&v))
	fs := flag.NewFlagSet("x", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	v = "def"
	f := addFlags(fs, mqttclient.DefaultSettings("me"), keys)
	fl := fs.Lookup("added-key")
	if fl == nil {
		t.Fatal("no flag --added-key")
	}
	if want := "an added `thing` (env CANDEC_ADDED_KEY)"; fl.Usage != want || fl.DefValue != "def" {
		t.Errorf("--added-key: usage %q default %q, want %q and def", fl.Usage, fl.DefValue, want)
	}
	if _, err := f.Settings([]string{"CANDEC_ADDED_KEY=from-env"}); err != nil || v != "from-env" {
		t.Errorf("CANDEC_ADDED_KEY: got %q (%v), want from-env", v, err)
	}
	if _, err := f.Settings([]string{"CANDEC_ADDED_KEY=bad"}); err == nil || !strings.HasPrefix(err.Error(), "CANDEC_ADDED_KEY: not a thing") {
		t.Errorf("CANDEC_ADDED_KEY=bad: got %v, want the variable named", err)
	}
	if err := fs.Parse([]string{"--added-key", "bad"}); err == nil || !strings.Contains(err.Error(), "-added-key: not a thing") {
		t.Errorf("--added-key bad: got %v, want the flag named", err)
	}
	if err := fs.Parse([]string{"--added-key", "from-flag"}); err != nil {
		t.Fatal(err)
	}
	if _, err := f.Settings([]string{"CANDEC_ADDED_KEY=from-env"}); err != nil || v != "from-flag" {
		t.Errorf("--added-key over CANDEC_ADDED_KEY: got %q (%v), want from-flag", v, err)
	}
	got := strings.Join(args(mqttclient.DefaultSettings("me"), keys), " ")
	if !strings.HasSuffix(got, " --added-key from-flag") {
		t.Errorf("Args: got %q, want it to end with --added-key from-flag", got)
	}
}

// TestDocTable: the package documentation's table has a row for each
// key of the table, in its order, with its flag, its variable and its
// default as the rows give them.
func TestDocTable(t *testing.T) {
	src, err := os.ReadFile("doc.go")
	if err != nil {
		t.Fatal(err)
	}
	var rows [][]string
	for _, line := range strings.Split(string(src), "\n") {
		if f := strings.Fields(strings.TrimPrefix(line, "//\t")); strings.HasPrefix(line, "//\t") && len(f) >= 4 && f[0] != "key" {
			rows = append(rows, f)
		}
	}
	keys := mqttclient.Keys()
	if len(rows) != len(keys) {
		t.Fatalf("doc.go's table has %d rows, the keys are %d", len(rows), len(keys))
	}
	for i, k := range keys {
		flagCol, envCol := "--"+flagenv.FlagName(k.Name), flagenv.EnvName(k.Name)
		if k.Secret {
			flagCol = "(none)"
		}
		if k.Own {
			envCol = "(run's"
		}
		r := rows[i]
		if r[0] != k.Name || r[1] != flagCol || r[2] != envCol || (k.Default != "" && r[3] != k.Default) {
			t.Errorf("doc.go row %q, want key %s, flag %s, variable %s, default %q", strings.Join(r, " "), k.Name, flagCol, envCol, k.Default)
		}
	}
}
