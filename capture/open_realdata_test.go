package capture

import (
	"bytes"
	"compress/gzip"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/yukart/candec/frame"
)

// formatNames maps INDEX.tsv's format column to the name Open gives.
var formatNames = map[string]string{
	"Vector ASC":           "asc",
	"Vector BLF":           "blf",
	"PEAK TRC":             "trc",
	"ASAM MDF 4 (CANedge)": "mf4",
}

// TestOpenFormatsFolder opens every capture of the formats folder with
// Open, by content alone (the names are copied to one without an
// extension first), and compares it with its expected frames.
func TestOpenFormatsFolder(t *testing.T) {
	dir := formatsDir(t)
	tmp := t.TempDir()
	for i, r := range formatIndex(t, dir) {
		t.Run(r.file, func(t *testing.T) {
			data, err := os.ReadFile(filepath.Join(dir, r.file))
			if err != nil {
				t.Fatal(err)
			}
			name := filepath.Join(tmp, "capture"+strings.Repeat("_", i))
			if err := os.WriteFile(name, data, 0o600); err != nil {
				t.Fatal(err)
			}
			f, err := Open(name, Options{})
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			want := formatNames[r.format]
			if want == "" {
				t.Fatalf("INDEX.tsv format %q: no format name known for it", r.format)
			}
			if strings.HasSuffix(r.file, ".gz") {
				want += ".gz"
			}
			if got := f.Format(); got != want {
				t.Errorf("format %q, want %q", got, want)
			}
			exp, err := os.Open(filepath.Join(dir, r.expected))
			if err != nil {
				t.Fatal(err)
			}
			defer exp.Close()
			tol := time.Microsecond
			if strings.Contains(r.format, "TRC") {
				tol = 5 * time.Microsecond
			}
			n, e := compareFrames(t, r.file, f, exp, tol)
			if n != r.frames || e != r.errorFrames {
				t.Errorf("got %d frames and %d error frames, INDEX.tsv says %d and %d", n, e, r.frames, r.errorFrames)
			}
		})
	}
}

// TestGzip: a gzip file of any format is read as that format; what is
// wrong with it is said.
func TestGzip(t *testing.T) {
	gz := func(s string) []byte {
		var b bytes.Buffer
		w := gzip.NewWriter(&b)
		w.Write([]byte(s))
		w.Close()
		return b.Bytes()
	}
	candump := "(1.000000) can0 123#DEADBEEF\n(2.000000) can1 00000456#01\n"
	asc := "date Mon Oct 9 16:17:36.000 2023\nbase hex  timestamps absolute\n   0.001000 2  1A0             Rx   d 2 01 02\n"
	tests := []struct {
		name   string
		in     []byte
		format string
		frames int
		err    string // of NewSource, or of the last Next
	}{
		{"candump", gz(candump), "candump.gz", 2, ""},
		{"asc", gz(asc), "asc.gz", 1, ""},
		{"two members", append(gz(candump), gz("(3.000000) can0 789#\n")...), "candump.gz", 3, ""},
		{"empty", gz(""), "candump.gz", 0, ""},
		{"garbage inside", gz("hello\n"), "", 0, `gzip file: capture: unknown format: its first line is "hello"`},
		{"gzip in gzip", gz(string(gz(candump))), "", 0, "a gzip file inside a gzip file"},
		{"cut", gz(candump)[:len(gz(candump))-6], "candump.gz", 2, "unexpected EOF"},
		{"bad header", []byte{0x1f, 0x8b, 0, 0}, "", 0, "capture: gzip: compressed byte 4: unexpected EOF"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			src, format, err := newSource(bytes.NewReader(tt.in), Options{})
			if err != nil {
				if tt.err == "" || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("got %v, want %q", err, tt.err)
				}
				return
			}
			if format != tt.format {
				t.Errorf("format %q, want %q", format, tt.format)
			}
			var f frame.Frame
			n := 0
			for err = src.Next(&f); err == nil; err = src.Next(&f) {
				n++
			}
			if n != tt.frames {
				t.Errorf("got %d frames, want %d", n, tt.frames)
			}
			switch {
			case tt.err == "" && !errors.Is(err, io.EOF):
				t.Errorf("got %v, want io.EOF", err)
			case tt.err != "" && !strings.Contains(err.Error(), tt.err):
				t.Errorf("got %v, want %q", err, tt.err)
			}
		})
	}
}
