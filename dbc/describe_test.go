package dbc_test

import (
	"bytes"
	"flag"
	"os"
	"testing"

	"github.com/yukart/candec/dbc"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

// TestDescribe compares the listing of three files loaded together with
// testdata/describe.golden. Run with -update after a deliberate change.
func TestDescribe(t *testing.T) {
	db, err := dbc.Load("testdata/quirks.dbc", "testdata/cp1252.dbc", "testdata/wheel.dbc")
	if err != nil {
		t.Fatal(err)
	}
	var got bytes.Buffer
	if err := db.Describe(&got); err != nil {
		t.Fatal(err)
	}
	const golden = "testdata/describe.golden"
	if *update {
		if err := os.WriteFile(golden, got.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got.Bytes(), want) {
		t.Errorf("Describe differs from %s (rerun with -update to accept):\n--- got\n%s\n--- want\n%s", golden, got.Bytes(), want)
	}
}
