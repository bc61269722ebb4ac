package cli

import (
	"bytes"
	"context"
	"path/filepath"
	"strings"
	"testing"
)

// TestDecodeInputs covers what a user types wrong and the filters: each
// case gets a one-line error or the lines it asked for.
func TestDecodeInputs(t *testing.T) {
	dbcFile := filepath.Join("..", "..", "..", "testdata", "yukart.dbc")
	// A frame of the charger's 29-bit message, a malformed line and a
	// frame on another interface.
	capture := "(1791563856.001301) can0 18FF50E5#0000000000000000\n" +
		"(1791563856.002000) can0 12G#00\n" +
		"(1791563856.003000) can7 7FF#00\n"
	for _, c := range []struct {
		name    string
		args    []string
		wantErr string // substring of the error; "" for success
		wantOut []string
		notOut  []string
		wantLog string // substring of stderr
	}{
		{name: "no dbc", args: []string{"-"}, wantErr: "--dbc is required"},
		{name: "no capture", args: []string{"--dbc", dbcFile}, wantErr: "no CAPTURE given"},
		{name: "bad format", args: []string{"--dbc", dbcFile, "--format", "xml", "-"}, wantErr: `unknown --format "xml"`},
		{name: "bad glob", args: []string{"--dbc", dbcFile, "--signals", "[", "-"}, wantErr: "bad --signals glob"},
		{name: "bad iface spec", args: []string{"--dbc", "can0=", "-"}, wantErr: `"can0=" names no file after =`},
		{name: "missing dbc file", args: []string{"--dbc", "nope.dbc", "-"}, wantErr: "nope.dbc"},
		{name: "malformed line stops", args: []string{"--dbc", dbcFile, "-"}, wantErr: "decode: stdin:2: column 28: invalid character 'G'"},
		{
			name: "skip invalid, csv, glob", args: []string{"--dbc", dbcFile, "--skip-invalid", "--format", "csv", "--signals", "CHG_*", "-"},
			wantOut: []string{"t,ts,bus,id,signal,value,nonfinite,unit,label,oor", "1791563856.001301,1791563856001301000,can0,419385573,CHG_Status.CHG_OutputVoltage,0.0,,V,,"},
			notOut:  []string{"\"signal\""},
			wantLog: "skipped 1 malformed lines",
		},
		{
			name: "per-interface dbc leaves other buses out", args: []string{"--dbc", "can7=" + dbcFile, "--skip-invalid", "-"},
			notOut: []string{"CHG_"},
		},
	} {
		t.Run(c.name, func(t *testing.T) {
			var out, stderr bytes.Buffer
			err := run(context.Background(), Env{strings.NewReader(capture), &out, &stderr}, append([]string{"decode"}, c.args...))
			if c.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), c.wantErr) {
					t.Fatalf("got error %v, want one containing %q", err, c.wantErr)
				}
				if strings.Contains(err.Error(), "\n") {
					t.Errorf("error is not one line: %q", err)
				}
				return
			}
			if err != nil {
				t.Fatalf("got error %v\n%s", err, stderr.String())
			}
			for _, w := range c.wantOut {
				if !strings.Contains(out.String(), w) {
					t.Errorf("output lacks %q:\n%s", w, out.String())
				}
			}
			for _, n := range c.notOut {
				if strings.Contains(out.String(), n) {
					t.Errorf("output has %q:\n%s", n, out.String())
				}
			}
			if !strings.Contains(stderr.String(), c.wantLog) {
				t.Errorf("stderr %q lacks %q", stderr.String(), c.wantLog)
			}
		})
	}
}
