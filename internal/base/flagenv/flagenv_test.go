package flagenv

import (
	"errors"
	"flag"
	"io"
	"reflect"
	"strings"
	"testing"
)

func TestNames(t *testing.T) {
	for _, tc := range []struct{ key, flag, env string }{
		{"broker", "broker", "CANDEC_BROKER"},
		{"client_id", "client-id", "CANDEC_CLIENT_ID"},
		{"shutdown_timeout", "shutdown-timeout", "CANDEC_SHUTDOWN_TIMEOUT"},
	} {
		if got := FlagName(tc.key); got != tc.flag {
			t.Errorf("FlagName(%s): got %s, want %s", tc.key, got, tc.flag)
		}
		if got := EnvName(tc.key); got != tc.env {
			t.Errorf("EnvName(%s): got %s, want %s", tc.key, got, tc.env)
		}
	}
}

// TestValue: the values given are recorded in order, a refused one is an
// error naming the flag, and the help shows the default.
func TestValue(t *testing.T) {
	var got []string
	fs := flag.NewFlagSet("x", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.Var(&Value{Default: "30s", Record: func(v string) error {
		if v == "bad" {
			return errors.New("not a duration")
		}
		got = append(got, v)
		return nil
	}}, "keepalive", "keep-alive `duration`")
	if err := fs.Parse([]string{"--keepalive", "1s", "--keepalive=2s"}); err != nil {
		t.Fatal(err)
	}
	if want := []string{"1s", "2s"}; !reflect.DeepEqual(got, want) {
		t.Errorf("recorded %q, want %q", got, want)
	}
	if err := fs.Parse([]string{"--keepalive", "bad"}); err == nil || !strings.Contains(err.Error(), `invalid value "bad" for flag -keepalive: not a duration`) {
		t.Errorf("got %v, want the value refused naming the flag", err)
	}
	var help strings.Builder
	fs.SetOutput(&help)
	fs.PrintDefaults()
	if !strings.Contains(help.String(), "(default 30s)") {
		t.Errorf("help %q does not show the default", help.String())
	}
	fs = flag.NewFlagSet("y", flag.ContinueOnError)
	fs.Var(&Value{Record: func(string) error { return nil }}, "topic", "a `topic`")
	help.Reset()
	fs.SetOutput(&help)
	fs.PrintDefaults()
	if strings.Contains(help.String(), "default") {
		t.Errorf("help %q shows an empty default", help.String())
	}
}
