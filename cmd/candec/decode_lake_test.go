package main

import (
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/parquet-go/parquet-go"

	"github.com/yukart/candec/dbc"
	"github.com/yukart/candec/internal/cmdkit/cli"
	"github.com/yukart/candec/internal/fleet/lake"
)

var idleLog = filepath.Join("..", "..", "testdata", "idle.log")

// captureDir writes the idle capture cut in four parts (the last
// gzipped, in a subdirectory: z/ comes after the others in lexical
// order), a file of no capture format and a hidden file into a
// directory.
func captureDir(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile(idleLog)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.SplitAfter(string(b), "\n")
	dir := t.TempDir()
	q := len(lines) / 4
	for i := range 4 {
		part := strings.Join(lines[i*q:min((i+1)*q, len(lines))], "")
		if i == 3 {
			part = strings.Join(lines[i*q:], "")
			var z bytes.Buffer
			zw := gzip.NewWriter(&z)
			zw.Write([]byte(part))
			zw.Close()
			os.WriteFile(filepath.Join(dir, "z", "part3.log.gz"), z.Bytes(), 0o644)
			continue
		}
		if i == 2 {
			os.MkdirAll(filepath.Join(dir, "z"), 0o755)
		}
		writeFile(t, dir, "part"+string(rune('0'+i))+".log", part)
	}
	writeFile(t, dir, "README.txt", "notes about the drive\n")
	writeFile(t, dir, ".hidden.log", "(1.0) can0 0A0#ZZ\n")
	return dir
}

// tree returns every file under dir with its bytes.
func tree(t *testing.T, dir string) map[string][]byte {
	t.Helper()
	out := map[string][]byte{}
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		b, _ := os.ReadFile(p)
		out[rel] = b
		return nil
	})
	return out
}

func runDecodeArgs(t *testing.T, args ...string) (string, error) {
	t.Helper()
	var out, stderr bytes.Buffer
	err := run(context.Background(), cli.Env{Stdin: strings.NewReader(""), Stdout: &out, Stderr: &stderr}, append([]string{"decode"}, args...))
	return stderr.String(), err
}

// TestDecodeLakeDeterministic decodes a directory of captures into a
// lake on one job and on four: every file is the same, byte for byte.
// The file of no capture format is left out with a warning, the hidden
// one is not read, and a re-run into the same lake changes nothing.
func TestDecodeLakeDeterministic(t *testing.T) {
	in := captureDir(t)
	var trees []map[string][]byte
	for _, jobs := range []string{"1", "4"} {
		outDir := filepath.Join(t.TempDir(), "lake")
		stderr, err := runDecodeArgs(t, "--dbc", yukartDBC, "--jobs", jobs, "--out-dir", outDir, in)
		if err != nil {
			t.Fatalf("jobs %s: %v\n%s", jobs, err, stderr)
		}
		if !strings.Contains(stderr, "README.txt left out: no capture format") || !strings.Contains(stderr, "4 captures, 17827 frames") {
			t.Errorf("jobs %s: stderr %q: want README.txt left out and 4 captures of 17827 frames", jobs, stderr)
		}
		if strings.Contains(stderr, "hidden") {
			t.Errorf("stderr %q names the hidden file", stderr)
		}
		// A re-run replaces its files rather than adding rows.
		if stderr, err := runDecodeArgs(t, "--dbc", yukartDBC, "--jobs", jobs, "--out-dir", outDir, in); err != nil {
			t.Fatalf("re-run: %v\n%s", err, stderr)
		}
		trees = append(trees, tree(t, outDir))
	}
	a, b := trees[0], trees[1]
	if len(a) < 10 || len(a) != len(b) {
		t.Fatalf("got %d and %d files, want the same, more than 10", len(a), len(b))
	}
	for name, data := range a {
		if !bytes.Equal(data, b[name]) {
			t.Errorf("%s differs between --jobs 1 and --jobs 4", name)
		}
		if strings.HasSuffix(name, ".tmp") || strings.HasPrefix(filepath.Base(name), ".") {
			t.Errorf("temporary file %s left", name)
		}
	}
	// The rows of the four parts are the frames of their messages.
	rows := int64(0)
	for name, data := range a {
		if !strings.HasSuffix(name, ".parquet") {
			continue
		}
		pf, err := parquet.OpenFile(bytes.NewReader(data), int64(len(data)))
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		rows += pf.NumRows()
	}
	if want := decodedFrames(t); rows != want {
		t.Errorf("got %d rows in the lake, want %d (the decoded frames)", rows, want)
	}
}

// decodedFrames counts the frames of the idle capture that decode to
// at least one value, by the JSON lines.
func decodedFrames(t *testing.T) int64 {
	t.Helper()
	var out, stderr bytes.Buffer
	if err := run(context.Background(), cli.Env{Stdin: nil, Stdout: &out, Stderr: &stderr}, []string{"decode", "--dbc", yukartDBC, idleLog}); err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, l := range strings.Split(out.String(), "\n") {
		if i := strings.Index(l, `,"signal":`); i > 0 {
			seen[l[:i]] = true // time, bus and id: one frame
		}
	}
	return int64(len(seen))
}

// TestDecodeManyErrors: a corrupt capture among many stops the run with
// its name and position; with --skip-invalid it is counted and the rest
// are decoded. A file named on the command line that is no capture is
// an error, and a lake is never mixed with another DBC.
func TestDecodeManyErrors(t *testing.T) {
	in := captureDir(t)
	bad := writeFile(t, in, "z/bad.log", "(1791563856.001301) can0 0A0#FA0007002C00F198\n(1791563856.0) can0 0A0#ZZ\n")
	cut := filepath.Join(in, "z", "cut.log.gz")
	var z bytes.Buffer
	zw := gzip.NewWriter(&z)
	zw.Write(bytes.Repeat([]byte("(1791563856.001301) can0 0A0#FA0007002C00F198\n"), 1000))
	zw.Close()
	os.WriteFile(cut, z.Bytes()[:z.Len()/2], 0o644)

	outDir := filepath.Join(t.TempDir(), "lake")
	_, err := runDecodeArgs(t, "--dbc", yukartDBC, "--jobs", "1", "--out-dir", outDir, in)
	if err == nil || !strings.Contains(err.Error(), bad+":2: column") {
		t.Errorf("got %v, want the error of %s line 2", err, bad)
	}
	for name := range tree(t, outDir) {
		if strings.HasSuffix(name, ".tmp") {
			t.Errorf("temporary file %s left", name)
		}
	}

	stderr, err := runDecodeArgs(t, "--dbc", yukartDBC, "--skip-invalid", "--out-dir", filepath.Join(t.TempDir(), "lake"), in)
	if err != nil {
		t.Fatalf("--skip-invalid: %v\n%s", err, stderr)
	}
	for _, want := range []string{"cut.log.gz skipped:", "1 captures skipped (--skip-invalid)", "skipped 1 malformed lines", "5 captures, 17828 frames"} {
		if !strings.Contains(stderr, want) {
			t.Errorf("stderr %q lacks %q", stderr, want)
		}
	}

	readme := filepath.Join(in, "README.txt")
	if _, err := runDecodeArgs(t, "--dbc", yukartDBC, "--out-dir", filepath.Join(t.TempDir(), "lake"), readme, idleLog); err == nil || !strings.Contains(err.Error(), "unknown format") {
		t.Errorf("a named file of no capture format: got %v, want an unknown format error", err)
	}

	lk := filepath.Join(t.TempDir(), "lake")
	if _, err := runDecodeArgs(t, "--dbc", yukartDBC, "--out-dir", lk, idleLog); err != nil {
		t.Fatal(err)
	}
	other := writeFile(t, t.TempDir(), "other.dbc", "BO_ 160 M: 8 E\n SG_ S : 0|16@1+ (1,0) [0|0] \"\" E\n")
	if _, err := runDecodeArgs(t, "--dbc", other, "--out-dir", lk, idleLog); err == nil || !strings.Contains(err.Error(), "other DBC files") {
		t.Errorf("a lake of another DBC: got %v, want it refused", err)
	}
}

// TestDecodeParquetLong writes the long form and checks it holds a row
// per JSON line; a directory decoded to JSON lines is the decode of its
// captures one after the other.
func TestDecodeParquetLong(t *testing.T) {
	out := filepath.Join(t.TempDir(), "values.parquet")
	if stderr, err := runDecodeArgs(t, "--dbc", yukartDBC, "--format", "parquet", "-o", out, idleLog); err != nil {
		t.Fatalf("%v\n%s", err, stderr)
	}
	var jsonl, stderr bytes.Buffer
	if err := run(context.Background(), cli.Env{Stdin: nil, Stdout: &jsonl, Stderr: &stderr}, []string{"decode", "--dbc", yukartDBC, idleLog}); err != nil {
		t.Fatal(err)
	}
	lines := int64(strings.Count(jsonl.String(), "\n"))
	b, _ := os.ReadFile(out)
	pf, err := parquet.OpenFile(bytes.NewReader(b), int64(len(b)))
	if err != nil {
		t.Fatal(err)
	}
	if pf.NumRows() != lines {
		t.Errorf("got %d rows, want %d (the JSON lines)", pf.NumRows(), lines)
	}

	in := captureDir(t)
	var many bytes.Buffer
	stderr.Reset()
	if err := run(context.Background(), cli.Env{Stdin: nil, Stdout: &many, Stderr: &stderr}, []string{"decode", "--dbc", yukartDBC, in}); err != nil {
		t.Fatalf("%v\n%s", err, stderr.String())
	}
	if !bytes.Equal(many.Bytes(), jsonl.Bytes()) {
		t.Errorf("the decode of the parts (%d bytes) is not that of the whole capture (%d bytes)", many.Len(), jsonl.Len())
	}
}

// TestDecodeLakeBusy: a decode into a lake that another run holds is
// refused at once, naming the lake; the next run removes the temporary
// files a killed run left, and says how many.
func TestDecodeLakeBusy(t *testing.T) {
	outDir := filepath.Join(t.TempDir(), "lake")
	if stderr, err := runDecodeArgs(t, "--dbc", yukartDBC, "--out-dir", outDir, idleLog); err != nil {
		t.Fatalf("%v\n%s", err, stderr)
	}
	h, err := (&dbc.BusFiles{All: []string{yukartDBC}}).Hash(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	held, err := lake.Open(lake.Config{Dir: outDir, DBC: h})
	if err != nil {
		t.Fatal(err)
	}
	_, err = runDecodeArgs(t, "--dbc", yukartDBC, "--out-dir", outDir, idleLog)
	held.Close()
	if err == nil || !strings.Contains(err.Error(), "another candec run is writing the lake: "+outDir) {
		t.Errorf("a decode into a held lake: got %v, want it refused naming %s", err, outDir)
	}

	parts, _ := filepath.Glob(filepath.Join(outDir, "message=*", "date=*"))
	if len(parts) == 0 {
		t.Fatal("no partition in the lake")
	}
	left := writeFile(t, parts[0], ".candec-123.tmp", "PAR1")
	stderr, err := runDecodeArgs(t, "--dbc", yukartDBC, "--out-dir", outDir, idleLog)
	if err != nil {
		t.Fatalf("%v\n%s", err, stderr)
	}
	if !strings.Contains(stderr, "; 1 temporary files of an unfinished run removed") {
		t.Errorf("stderr %q: want the temporary file removed counted", stderr)
	}
	if _, err := os.Stat(left); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("%s is still there (%v)", left, err)
	}
}
