package cli

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/yukart/candec/capture"
	"github.com/yukart/candec/frame"
	"github.com/yukart/candec/internal/testkit/realdata"
)

// TestConvertFormatsFolder converts every capture of the formats folder
// and reads the output back: the same frames as the capture's own
// reader gives (whose agreement with the expected files the capture
// package tests), error frames left out and counted.
func TestConvertFormatsFolder(t *testing.T) {
	dir := filepath.Join(realdata.Dir(t), "formats")
	names, err := filepath.Glob(filepath.Join(dir, "*"))
	if err != nil || len(names) == 0 {
		t.Skip("no formats folder in the reference data")
	}
	n := 0
	for _, name := range names {
		base := filepath.Base(name)
		if strings.HasSuffix(base, ".expected.log") || strings.HasSuffix(base, ".md") || strings.HasSuffix(base, ".tsv") ||
			strings.HasSuffix(base, ".dbc") || strings.HasSuffix(base, ".jsonl") {
			continue
		}
		if _, err := os.Stat(name + ".expected.log"); err != nil {
			continue
		}
		n++
		t.Run(base, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "out.log")
			var stderr bytes.Buffer
			if err := run(context.Background(), Env{nil, &bytes.Buffer{}, &stderr}, []string{"convert", name, out}); err != nil {
				t.Fatalf("convert: %v", err)
			}
			want, err := capture.Open(name, capture.Options{})
			if err != nil {
				t.Fatal(err)
			}
			defer want.Close()
			got, err := capture.Open(out, capture.Options{})
			if err != nil {
				t.Fatal(err)
			}
			defer got.Close()
			var g, w frame.Frame
			frames, errorFrames := 0, 0
			for {
				werr := want.Next(&w)
				if werr == nil && w.Flags&frame.Error != 0 {
					errorFrames++
					continue
				}
				gerr := got.Next(&g)
				if errors.Is(werr, io.EOF) && errors.Is(gerr, io.EOF) {
					break
				}
				if werr != nil || gerr != nil {
					t.Fatalf("frame %d: capture %v, converted %v", frames+1, werr, gerr)
				}
				frames++
				if g != w || got.Interface(g.Bus) != want.Interface(w.Bus) {
					t.Fatalf("frame %d: converted %+v on %s, want %+v on %s", frames, g, got.Interface(g.Bus), w, want.Interface(w.Bus))
				}
			}
			line := stderr.String()
			if !strings.HasPrefix(line, "convert: ") || !strings.Contains(line, " frames from ") ||
				(errorFrames > 0) != strings.Contains(line, "error frames left out") {
				t.Errorf("summary %q for %d frames and %d error frames", line, frames, errorFrames)
			}
		})
	}
	if n < 25 {
		t.Errorf("converted %d captures, want the formats folder's 29 or so", n)
	}
}

// TestConvertBadInput: errors name the input and where, leave an output
// that was there as it was when nothing converted, and keep the frames
// before a malformed record.
func TestConvertBadInput(t *testing.T) {
	dir := t.TempDir()
	good := writeFile(t, dir, "good.log", "(1.000000) can0 123#01\n")
	bad := writeFile(t, dir, "bad.log", "(1.000000) can0 123#01\n(2.000000) can0 12#00\n")
	badFirst := writeFile(t, dir, "badfirst.log", "(2.000000) can0 12#00\n")
	unknown := writeFile(t, dir, "unknown.txt", "hello\n")
	tests := []struct {
		name    string
		args    []string
		code    int
		err     string
		outText string // what out holds afterwards ("" : untouched "precious")
	}{
		{"no args", []string{"convert"}, 2, "no IN given", ""},
		{"one arg", []string{"convert", good}, 2, "want IN and OUT, got 1", ""},
		{"three args", []string{"convert", good, "out", "x"}, 2, "want IN and OUT, got 3", ""},
		{"missing input", []string{"convert", filepath.Join(dir, "nope.log"), "OUT"}, 1, "nope.log: no such file", ""},
		{"directory", []string{"convert", dir, "OUT"}, 1, "is a directory, not a capture", ""},
		{"unknown format", []string{"convert", unknown, "OUT"}, 1, "unknown format", ""},
		{"output is input", []string{"convert", good, good}, 2, "is the input", ""},
		{"bad first line", []string{"convert", badFirst, "OUT"}, 1, "badfirst.log: capture: line 1: column 17", ""},
		{"bad later line", []string{"convert", bad, "OUT"}, 1, "stopped after 1 frames: capture: line 2: column 17", "(1.000000) can0 123#01\n"},
		{"flag after IN", []string{"convert", good, "--skip-invalid", "OUT"}, 2, "flags go before IN", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "out.log")
			if err := os.WriteFile(out, []byte("precious"), 0o644); err != nil {
				t.Fatal(err)
			}
			args := append([]string(nil), tt.args...)
			for i, a := range args {
				if a == "OUT" {
					args[i] = out
				}
			}
			err := run(context.Background(), Env{nil, &bytes.Buffer{}, &bytes.Buffer{}}, args)
			if err == nil || ExitCode(err) != tt.code || !strings.Contains(err.Error(), tt.err) {
				t.Fatalf("got %v (status %d), want status %d with %q", err, ExitCode(err), tt.code, tt.err)
			}
			b, _ := os.ReadFile(out)
			want := tt.outText
			if want == "" {
				want = "precious"
			}
			if string(b) != want {
				t.Errorf("out holds %q, want %q", b, want)
			}
		})
	}
}

// TestConvertStdinStdout: - reads standard input and writes standard
// output.
func TestConvertStdinStdout(t *testing.T) {
	in := "date Mon Oct 9 16:17:36.000 2023\nbase hex  timestamps absolute\n   0.001000 2  1A0             Rx   d 2 01 02\n"
	var stdout, stderr bytes.Buffer
	if err := run(context.Background(), Env{strings.NewReader(in), &stdout, &stderr}, []string{"convert", "-", "-"}); err != nil {
		t.Fatal(err)
	}
	if want := "(1696868256.001000) can1 1A0#0102\n"; stdout.String() != want {
		t.Errorf("got %q, want %q", stdout.String(), want)
	}
	if want := "convert: 1 frames from - (asc)\n"; stderr.String() != want {
		t.Errorf("stderr %q, want %q", stderr.String(), want)
	}
}
