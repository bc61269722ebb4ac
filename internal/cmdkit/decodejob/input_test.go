package decodejob

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/yukart/candec/internal/cmdkit/outformat"
	_ "github.com/yukart/candec/internal/cmdkit/outformat/parquetrow" // the developer's lake format, as cmd/candec links it
	"github.com/yukart/candec/internal/testkit/realdata"
)

// TestDecodeMF4InPlace: an MF4 file is read in place, with no temporary
// copy (so with TMPDIR a directory that does not exist, where a copy
// cannot be made), one capture to JSON lines and many into a lake; the
// lake's names have the file's hash. The same file through a pipe is
// still copied (and so fails there), and with a temporary directory it
// decodes to the same lines.
func TestDecodeMF4InPlace(t *testing.T) {
	dir := filepath.Join(realdata.Dir(t), "formats")
	mf4 := filepath.Join(dir, "css_asammdf-basics_00000001.MF4")
	dbcFile := filepath.Join(dir, "CSS-Electronics-SAE-J1939-DEMO.dbc")
	data, err := os.ReadFile(mf4)
	if err != nil {
		t.Skipf("no MF4 in the reference data: %v", err)
	}
	tmp := t.TempDir()
	t.Setenv("TMPDIR", filepath.Join(tmp, "none"))
	decode := func(cfg Config) (string, error) {
		var out, stderr bytes.Buffer
		cfg.DBCs.All, cfg.Stdout, cfg.Stderr, cfg.Jobs = []string{dbcFile}, &out, &stderr, 1
		err := Run(context.Background(), cfg)
		return out.String(), err
	}

	file, err := decode(Config{Inputs: []string{mf4}})
	if err != nil {
		t.Fatalf("decode of the file with no temporary directory: %v", err)
	}
	if n := strings.Count(file, "\n"); n < 1000 {
		t.Fatalf("got %d lines, want the file's values", n)
	}
	pipe := Config{Inputs: []string{"-"}, Stdin: struct{ io.Reader }{bytes.NewReader(data)}}
	if _, err := decode(pipe); err == nil || !strings.Contains(err.Error(), "no temporary copy") {
		t.Errorf("decode of a pipe with no temporary directory: got %v, want it to need a copy", err)
	}
	t.Setenv("TMPDIR", tmp)
	pipe.Stdin = struct{ io.Reader }{bytes.NewReader(data)}
	if piped, err := decode(pipe); err != nil || piped != file {
		t.Errorf("decode of a pipe: %v; the same lines as the file: %v", err, piped == file)
	}

	if _, ok := outformat.LakeFormat(); !ok {
		t.Fatal("no lake format: parquetrow is imported")
	}
	t.Setenv("TMPDIR", filepath.Join(tmp, "none"))
	lk := filepath.Join(tmp, "lake")
	if _, err := decode(Config{Inputs: []string{mf4}, OutDir: lk}); err != nil {
		t.Fatalf("decode into a lake with no temporary directory: %v", err)
	}
	sum := sha256.Sum256(data)
	files, _ := filepath.Glob(filepath.Join(lk, "*", "*", "*.parquet"))
	if len(files) == 0 {
		t.Fatal("no file in the lake")
	}
	for _, f := range files {
		if want := "-" + hex.EncodeToString(sum[:])[:16] + ".parquet"; !strings.HasSuffix(f, want) {
			t.Errorf("lake file %s: want a name ending %s, the file's hash", f, want)
		}
	}
}
