package cli

import (
	"bytes"
	"context"
	"strings"
	"testing"
)

func TestDBCCommand(t *testing.T) {
	dir := t.TempDir()
	good := writeFile(t, dir, "good.dbc", "BO_ 291 Speed: 8 ECU\n SG_ Kmh : 0|16@1+ (0.1,0) [0|300] \"km/h\" Dash\nFOO_ 1;\n")
	bad := writeFile(t, dir, "bad.dbc", "BO_ 291 Speed: 8 ECU\n SG_ Kmh : 0|16@3+ (0.1,0) [0|300] \"km/h\" Dash\n")

	var out bytes.Buffer
	if err := run(context.Background(), Env{nil, &out, &bytes.Buffer{}}, []string{"dbc", good}); err != nil {
		t.Fatalf("candec dbc good.dbc: %v", err)
	}
	for _, want := range []string{"1 messages, 1 signals", "123 Speed len=8", "Kmh", "km/h", good + `:3:1: unknown keyword "FOO_"`} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("candec dbc good.dbc: output lacks %q:\n%s", want, out.String())
		}
	}

	err := run(context.Background(), Env{nil, &bytes.Buffer{}, &bytes.Buffer{}}, []string{"dbc", good, bad})
	want := bad + `:2:17: expected byte order 0 (Motorola) or 1 (Intel), found "3"`
	if err == nil || err.Error() != want || ExitCode(err) != 1 {
		t.Errorf("candec dbc bad.dbc: got %v, want %s and exit status 1", err, want)
	}

	err = run(context.Background(), Env{nil, &bytes.Buffer{}, &bytes.Buffer{}}, []string{"dbc"})
	if err == nil || ExitCode(err) != 2 {
		t.Errorf("candec dbc without files: got %v, want a usage error with exit status 2", err)
	}
}

// TestDBCCommandTable: a file that is no DBC is an error naming it,
// numbers are listed as the DBC writes them, and -h is help.
func TestDBCCommandTable(t *testing.T) {
	dir := t.TempDir()
	capture := writeFile(t, dir, "idle.log", "(1791563856.001301) can0 0A0#0000070000000000\n")
	wide := writeFile(t, dir, "wide.dbc", "BO_ 1 Odo: 8 ECU\n SG_ Km : 0|24@1+ (1,0) [0|16777215] \"km\" Dash\n SG_ Fine : 24|32@1+ (0.000001,-0.5) [-0.5|4294.967295] \"\" Dash\n")
	for _, c := range []struct {
		name    string
		args    []string
		wantErr string // "" for success
		wantOut []string
	}{
		{"capture given as a DBC", []string{capture}, capture + ":1:1: no messages (no BO_ line): is this a DBC file?", nil},
		{"empty file", []string{writeFile(t, dir, "empty.dbc", "")}, "no messages", nil},
		{"numbers as in the DBC", []string{wide}, "", []string{"[0|16777215]", "0.000001", "-0.5", "[-0.5|4294.967295]"}},
		{"help", []string{"-h"}, "", []string{"Usage: candec dbc FILE"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			var out bytes.Buffer
			err := run(context.Background(), Env{nil, &out, &bytes.Buffer{}}, append([]string{"dbc"}, c.args...))
			if c.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), c.wantErr) || ExitCode(err) != 1 {
					t.Fatalf("got %v, want exit status 1 with %q", err, c.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			for _, w := range c.wantOut {
				if !strings.Contains(out.String(), w) {
					t.Errorf("output lacks %q:\n%s", w, out.String())
				}
			}
			if strings.Contains(out.String(), "e+") || strings.Contains(out.String(), "e-") {
				t.Errorf("output has an exponent:\n%s", out.String())
			}
		})
	}
}

// TestDBCCommandTerminal: a DBC's units, names of files and warnings reach
// the terminal with their control characters escaped, "°C" intact; an
// error that quotes the file is as safe.
func TestDBCCommandTerminal(t *testing.T) {
	dir := t.TempDir()
	good := writeFile(t, dir, "esc.dbc", "BO_ 291 Speed: 8 ECU\n SG_ Kmh : 0|16@1+ (0.1,0) [0|300] \"\x1b]0;pwned\x07\" Dash\n SG_ T : 16|8@1+ (1,0) [0|300] \"°C\u009b\" Dash\nFOO\x1b[2J_ 1;\n")
	var out bytes.Buffer
	if err := run(context.Background(), Env{nil, &out, &bytes.Buffer{}}, []string{"dbc", good}); err != nil {
		t.Fatalf("candec dbc: %v", err)
	}
	for _, want := range []string{`\x1b]0;pwned\a`, `°C\u009b`} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("candec dbc: output lacks %s:\n%s", want, out.String())
		}
	}
	if strings.ContainsAny(out.String(), "\x1b\x07\u009b") {
		t.Errorf("candec dbc: a control character reaches the terminal:\n%q", out.String())
	}

	bad := writeFile(t, dir, "bad\x1b[2J.dbc", "BO_ 291 Speed: 8 ECU\n SG_ Kmh : 0|16@3+ (0.1,0) [0|300] \"km/h\" Dash\n")
	err := run(context.Background(), Env{nil, &bytes.Buffer{}, &bytes.Buffer{}}, []string{"dbc", bad})
	if err == nil {
		t.Fatal("candec dbc bad.dbc: no error")
	}
	var stderr bytes.Buffer
	printError(&stderr, err)
	if got := stderr.String(); strings.Contains(got, "\x1b") || !strings.Contains(got, `bad\x1b[2J.dbc`) {
		t.Errorf("error line %q: want the file name with ESC escaped", got)
	}
}
