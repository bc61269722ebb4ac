package cli

import (
	"bytes"
	"compress/gzip"
	"context"
	"flag"
	"io"
	"os"
	"path/filepath"
	"testing"
)

var update = flag.Bool("update", false, "rewrite golden files")

// TestDecodeIdleGolden pins the decode of the car's idle capture with the
// car's DBC: every value, unit, label and flag of every frame.
func TestDecodeIdleGolden(t *testing.T) {
	root := filepath.Join("..", "..", "..")
	var out, stderr bytes.Buffer
	args := []string{"decode", "--dbc", filepath.Join(root, "testdata", "yukart.dbc"), filepath.Join(root, "testdata", "idle.log")}
	if err := run(context.Background(), Env{nil, &out, &stderr}, args); err != nil {
		t.Fatalf("decode: %v\n%s", err, stderr.String())
	}
	golden := filepath.Join("testdata", "idle.decode.jsonl.gz")
	if *update {
		var z bytes.Buffer
		zw, _ := gzip.NewWriterLevel(&z, gzip.BestCompression)
		zw.Write(out.Bytes())
		zw.Close()
		if err := os.WriteFile(golden, z.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	f, err := os.Open(golden)
	if err != nil {
		t.Fatalf("%v (run with -update to create it)", err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	want, err := io.ReadAll(zr)
	if err != nil {
		t.Fatal(err)
	}
	got := out.Bytes()
	if !bytes.Equal(got, want) {
		gl, wl := bytes.Split(got, []byte("\n")), bytes.Split(want, []byte("\n"))
		for i := range min(len(gl), len(wl)) {
			if !bytes.Equal(gl[i], wl[i]) {
				t.Fatalf("line %d:\ngot  %s\nwant %s\n(rerun with -update if the change is intended)", i+1, gl[i], wl[i])
			}
		}
		t.Fatalf("got %d lines, want %d (rerun with -update if the change is intended)", len(gl), len(wl))
	}
	if stderr.Len() != 0 {
		t.Errorf("stderr: %s", stderr.String())
	}
}
