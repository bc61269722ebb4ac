package outfile

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestCommitReplaces(t *testing.T) {
	dir := t.TempDir()
	name := filepath.Join(dir, "out.log")
	if err := os.WriteFile(name, []byte("old\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	f, err := Create(name, nil)
	if err != nil {
		t.Fatal(err)
	}
	f.Write([]byte("new\n"))
	if got, _ := os.ReadFile(name); string(got) != "old\n" {
		t.Fatalf("before Commit the file holds %q, want the old content", got)
	}
	if err := f.Commit(); err != nil {
		t.Fatal(err)
	}
	f.Abort() // no effect after Commit
	if got, _ := os.ReadFile(name); string(got) != "new\n" {
		t.Fatalf("got %q, want %q", got, "new\n")
	}
	if fi, _ := os.Stat(name); fi.Mode().Perm() != 0o600 {
		t.Errorf("mode %v, want the existing 0600 kept", fi.Mode().Perm())
	}
	assertOnly(t, dir, "out.log")
}

func TestAbortKeepsExisting(t *testing.T) {
	dir := t.TempDir()
	name := filepath.Join(dir, "precious.log")
	os.WriteFile(name, []byte("keep\n"), 0o644)
	f, err := Create(name, nil)
	if err != nil {
		t.Fatal(err)
	}
	f.Write([]byte("partial"))
	f.Abort()
	if got, _ := os.ReadFile(name); string(got) != "keep\n" {
		t.Fatalf("got %q after Abort, want the file untouched", got)
	}
	assertOnly(t, dir, "precious.log")
}

func TestAbortLeavesNothingNew(t *testing.T) {
	dir := t.TempDir()
	f, err := Create(filepath.Join(dir, "new.log"), nil)
	if err != nil {
		t.Fatal(err)
	}
	f.Write([]byte("partial"))
	f.Abort()
	assertOnly(t, dir)
}

func TestSameFileRefused(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "same.log")
	os.WriteFile(in, []byte("frames\n"), 0o644)
	link := filepath.Join(dir, "link.log")
	if err := os.Link(in, link); err != nil {
		t.Fatal(err)
	}
	for _, out := range []string{in, link, filepath.Join(dir, ".", "same.log")} {
		if _, err := Create(out, nil, "-", filepath.Join(dir, "missing"), in); !errors.Is(err, ErrSameFile) {
			t.Errorf("Create(%s) = %v, want ErrSameFile", out, err)
		}
	}
	if got, _ := os.ReadFile(in); string(got) != "frames\n" {
		t.Fatalf("input changed to %q", got)
	}
}

func TestDeviceWrittenInPlace(t *testing.T) {
	f, err := Create(os.DevNull, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.Write([]byte("x")); err != nil {
		t.Fatal(err)
	}
	f.Abort()
	if fi, err := os.Stat(os.DevNull); err != nil || fi.Mode().IsRegular() {
		t.Fatalf("%s after Abort: %v %v", os.DevNull, fi, err)
	}
}

func TestStdoutAndDirectory(t *testing.T) {
	var buf bytes.Buffer
	f, err := Create("-", &buf)
	if err != nil {
		t.Fatal(err)
	}
	f.Write([]byte("x"))
	if err := f.Commit(); err != nil || buf.String() != "x" {
		t.Fatalf("stdout: %q %v", buf.String(), err)
	}
	if _, err := Create(t.TempDir(), nil); err == nil {
		t.Fatal("a directory as output: no error")
	}
}

func assertOnly(t *testing.T, dir string, names ...string) {
	t.Helper()
	ents, _ := os.ReadDir(dir)
	var got []string
	for _, e := range ents {
		got = append(got, e.Name())
	}
	if len(got) != len(names) {
		t.Fatalf("directory holds %v, want %v", got, names)
	}
	for i := range names {
		if got[i] != names[i] {
			t.Fatalf("directory holds %v, want %v", got, names)
		}
	}
}

// TestCreateErrorNamesTheOutput: an output in a missing or unwritable
// directory is named as the user gave it, with its directory, never by
// the temporary file's name.
func TestCreateErrorNamesTheOutput(t *testing.T) {
	dir := t.TempDir()
	ro := filepath.Join(dir, "ro")
	if err := os.Mkdir(ro, 0o500); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name, want string
		skip       bool
	}{
		{filepath.Join(dir, "missing", "out.log"), filepath.Join(dir, "missing", "out.log") + ": the directory " + filepath.Join(dir, "missing") + " does not exist", false},
		{filepath.Join(ro, "out.log"), filepath.Join(ro, "out.log") + ": cannot create a file in " + ro + ": permission denied", os.Geteuid() == 0},
	} {
		if c.skip {
			continue
		}
		_, err := Create(c.name, nil)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("Create(%s): got %v, want %q", c.name, err, c.want)
		}
		if err != nil && strings.Contains(err.Error(), ".out.log") {
			t.Errorf("Create(%s): %q names the temporary file", c.name, err)
		}
	}
}
