package cardata

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"testing"
)

var update = flag.Bool("update", false, "copy testdata/yukart.dbc to the built-in yukart.dbc")

// testdata is the repository's testdata directory.
var testdata = filepath.Join("..", "..", "..", "testdata")

// TestDBCIsTestdata: the built-in DBC is testdata/yukart.dbc byte for
// byte, so the two cannot drift apart.
func TestDBCIsTestdata(t *testing.T) {
	want, err := os.ReadFile(filepath.Join(testdata, "yukart.dbc"))
	if err != nil {
		t.Fatal(err)
	}
	if *update {
		if err := os.WriteFile("yukart.dbc", want, 0o644); err != nil {
			t.Fatal(err)
		}
		t.Skip("yukart.dbc updated; build again to embed it")
	}
	if got := DBC(); !bytes.Equal(got, want) {
		t.Fatalf("the built-in yukart.dbc (%d bytes) differs from testdata/yukart.dbc (%d bytes): refresh it with go test ./internal/lab/cardata -update", len(got), len(want))
	}
	db, err := LoadDBC()
	if err != nil {
		t.Fatal(err)
	}
	if got, want := len(db.Messages), 27; got != want {
		t.Errorf("messages: got %d, want %d", got, want)
	}
}

// TestCaptureIsTestdata: the built-in capture is testdata/idle.log
// byte for byte.
func TestCaptureIsTestdata(t *testing.T) {
	want, err := os.ReadFile(filepath.Join(testdata, "idle.log"))
	if err != nil {
		t.Fatal(err)
	}
	got, err := Capture()
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("the built-in capture (%d bytes) differs from testdata/idle.log (%d bytes)", len(got), len(want))
	}
}

func TestMissing(t *testing.T) {
	dir := t.TempDir()
	if !Missing(filepath.Join(dir, "no.dbc")) {
		t.Error("Missing(absent file): got false, want true")
	}
	if Missing(dir) {
		t.Error("Missing(a directory that exists): got true, want false")
	}
}
