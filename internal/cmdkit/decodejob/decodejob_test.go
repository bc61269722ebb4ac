package decodejob

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/yukart/candec/dbc"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

var yukartDBC = filepath.Join("..", "..", "..", "testdata", "yukart.dbc")

// TestRunErrors: what was asked for wrongly is a *UsageError, a failed
// write a *WriteError (more than the write buffer holds, so it fails
// while decoding), and a bad capture neither.
func TestRunErrors(t *testing.T) {
	const good = "(1791563856.000000) can0 0A0#E803070000000000\n"
	tests := []struct {
		name    string
		cfg     Config
		stdin   string
		usage   bool
		write   bool
		wantErr string
	}{
		{"glob matching nothing", Config{Signals: []string{"NoSuch*"}}, good, true, false, `decode: --signals "NoSuch*" matches no signal in ` + yukartDBC},
		{"interface not in the capture", Config{DBCs: dbc.BusFiles{Interfaces: map[string][]string{"can7": {yukartDBC}}}}, good, true, false, "decode: --dbc can7=" + yukartDBC + ": no interface can7 in stdin (its interfaces are can0)"},
		{"policy, interface not in the capture", Config{DBCs: dbc.BusFiles{Interfaces: map[string][]string{"can7": {yukartDBC}}}, Policy: &Policy{File: "default"}}, good, true, false, "decode: --dbc can7="},
		{"negative tail", Config{Policy: &Policy{File: "default", PolicyOptions: PolicyOptions{Tail: -time.Second}}}, good, true, false, "decode: --tail must be 0 or more"},
		{"broken output", Config{Stdout: failWriter{}}, strings.Repeat(good, 5000), false, true, "decode: write: "},
		{"bad line", Config{}, "(1791563856.000000) can0 0A0#FAZZ\n", false, false, "decode: stdin:1: "},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := tt.cfg
			cfg.Inputs = []string{"-"}
			if cfg.DBCs.All == nil && cfg.DBCs.Interfaces == nil {
				cfg.DBCs.All = []string{yukartDBC}
			}
			cfg.Stdin = strings.NewReader(tt.stdin)
			if cfg.Stdout == nil {
				cfg.Stdout = &bytes.Buffer{}
			}
			cfg.Stderr = &bytes.Buffer{}
			err := Run(context.Background(), cfg)
			var u *UsageError
			var w *WriteError
			if err == nil || !strings.HasPrefix(err.Error(), tt.wantErr) {
				t.Fatalf("got %v, want an error beginning %q", err, tt.wantErr)
			}
			if got := errors.As(err, &u); got != tt.usage {
				t.Errorf("got a *UsageError %v, want %v", got, tt.usage)
			}
			if got := errors.As(err, &w); got != tt.write {
				t.Errorf("got a *WriteError %v, want %v", got, tt.write)
			}
		})
	}
}

type failWriter struct{}

func (failWriter) Write([]byte) (int, error) { return 0, errors.New("disk full") }

// TestUnseenInterfaceKeepsOutput: a --dbc IFACE= that names no
// interface of the capture fails the decode only once it is written:
// the output (values or envelopes) is kept, the error is a *UsageError
// naming the interface and the capture's own.
func TestUnseenInterfaceKeepsOutput(t *testing.T) {
	const capture = "(1791563856.000000) can0 0A0#E803070000000000\n(1791563856.100000) can0 0A0#E803070000000000\n"
	for _, policy := range []*Policy{nil, {File: "default"}} {
		out := filepath.Join(t.TempDir(), "out")
		var stderr bytes.Buffer
		err := Run(context.Background(), Config{
			Inputs: []string{"-"}, Out: out, Policy: policy, Stdin: strings.NewReader(capture), Stdout: &bytes.Buffer{}, Stderr: &stderr,
			DBCs: dbc.BusFiles{Interfaces: map[string][]string{"can0": {yukartDBC}, "can9": {yukartDBC}}},
		})
		var u *UsageError
		if !errors.As(err, &u) || !strings.Contains(err.Error(), "--dbc can9="+yukartDBC+": no interface can9 in stdin (its interfaces are can0)") {
			t.Errorf("policy %v: got %v, want a *UsageError naming can9", policy != nil, err)
		}
		if b, err := os.ReadFile(out); err != nil || len(b) == 0 {
			t.Errorf("policy %v: the output: %d bytes (%v), want it kept", policy != nil, len(b), err)
		}
	}
}
