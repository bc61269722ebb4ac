package main

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/yukart/candec/internal/lab/cardata"
)

// TestFleetDefaultsBuiltIn: outside a clone, bench --fleet's default
// DBC and capture are the copies built into candec, written beside the
// fleet's files (its ingests read the DBC from a file), not an error
// naming testdata/yukart.dbc; a file the user named is kept.
func TestFleetDefaultsBuiltIn(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(t.TempDir()) // no testdata here
	dbcDef, capDef := cardata.DBCFile, cardata.CaptureFile
	got, err := fleetDefaults(fleetFlags{dbc: &dbcDef, capture: &capDef}, dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		path string
		want []byte
	}{{*got.dbc, cardata.DBC()}, {*got.capture, mustCapture(t)}} {
		b, err := os.ReadFile(c.path)
		if err != nil || !bytes.Equal(b, c.want) || filepath.Dir(c.path) != dir {
			t.Errorf("%s: %v; want the built-in copy in %s", c.path, err, dir)
		}
	}
	mine := "my.dbc"
	got, err = fleetDefaults(fleetFlags{dbc: &mine, capture: &capDef}, dir)
	if err != nil || *got.dbc != mine {
		t.Errorf("a DBC the user named became %q (%v)", *got.dbc, err)
	}
}

func mustCapture(t *testing.T) []byte {
	t.Helper()
	b, err := cardata.Capture()
	if err != nil {
		t.Fatal(err)
	}
	return b
}
