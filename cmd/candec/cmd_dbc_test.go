package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestDBCCommand(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "good.dbc")
	bad := filepath.Join(dir, "bad.dbc")
	if err := os.WriteFile(good, []byte("BO_ 291 Speed: 8 ECU\n SG_ Kmh : 0|16@1+ (0.1,0) [0|300] \"km/h\" Dash\nFOO_ 1;\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(bad, []byte("BO_ 291 Speed: 8 ECU\n SG_ Kmh : 0|16@3+ (0.1,0) [0|300] \"km/h\" Dash\n"), 0o644); err != nil {
		t.Fatal(err)
	}

	var out bytes.Buffer
	if err := run(context.Background(), env{nil, &out, &bytes.Buffer{}}, []string{"dbc", good}); err != nil {
		t.Fatalf("candec dbc good.dbc: %v", err)
	}
	for _, want := range []string{"1 messages, 1 signals", "123 Speed len=8", "Kmh", "km/h", good + `:3:1: unknown keyword "FOO_"`} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("candec dbc good.dbc: output lacks %q:\n%s", want, out.String())
		}
	}

	err := run(context.Background(), env{nil, &bytes.Buffer{}, &bytes.Buffer{}}, []string{"dbc", good, bad})
	want := bad + `:2:17: expected byte order 0 (Motorola) or 1 (Intel), found "3"`
	if err == nil || err.Error() != want || exitCode(err) != 1 {
		t.Errorf("candec dbc bad.dbc: got %v, want %s and exit status 1", err, want)
	}

	err = run(context.Background(), env{nil, &bytes.Buffer{}, &bytes.Buffer{}}, []string{"dbc"})
	if err == nil || exitCode(err) != 2 {
		t.Errorf("candec dbc without files: got %v, want a usage error with exit status 2", err)
	}
}
