//go:build unix

package lake

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// vehicleTemps returns the temporary files in the lake's vehicle=
// partitions.
func vehicleTemps(t *testing.T, dir string) []string {
	t.Helper()
	got, err := filepath.Glob(filepath.Join(dir, "vehicle=*", "message=*", "date=*", tempPattern))
	if err != nil {
		t.Fatal(err)
	}
	return got
}

// added returns what is in after and not in before.
func added(before, after []string) []string {
	var out []string
	for _, s := range after {
		if !slices.Contains(before, s) {
			out = append(out, s)
		}
	}
	return out
}

// TestOwnersShareLake: owners open one lake at once, while a run
// without an owner (a decode) is refused as busy, and they are while it
// holds the lake. An owner's Open removes its own temporary files
// (left by a run of it that was killed) and leaves the others', even
// those of an owner whose name starts with its own; those owners
// commit theirs after it.
func TestOwnersShareLake(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "lake")
	cfg := func(owner string) Config { return Config{Dir: dir, DBC: "sha256:1", RowGroupRows: 100, Owner: owner} }
	open := func(owner string) *Lake {
		t.Helper()
		l, err := Open(cfg(owner))
		if err != nil {
			t.Fatalf("Open of owner %q: %v", owner, err)
		}
		return l
	}
	a, b, evil := open("a"), open("a-b"), open("../a")
	defer b.Close()
	defer evil.Close()
	if _, err := Open(cfg("")); !errors.Is(err, ErrBusy) || !strings.Contains(err.Error(), dir) {
		t.Errorf("a decode's Open while owners hold the lake: got %v, want ErrBusy naming %s", err, dir)
	}
	var temps [3][]string // of a, b and evil, written in that order
	ws := make([]*Writer, 3)
	for i, l := range []*Lake{a, b, evil} {
		before := vehicleTemps(t, dir)
		ws[i] = l.NewWriterIn("vehicle=k1")
		decodeIdle(t, ws[i].Write)
		if temps[i] = added(before, vehicleTemps(t, dir)); len(temps[i]) == 0 {
			t.Fatalf("owner %d wrote no temporary file", i)
		}
	}
	a.Close() // as a killed run: its temporary files stay
	a2 := open("a")
	if a2.Removed() != len(temps[0]) {
		t.Errorf("Removed() = %d, want %d: owner a's", a2.Removed(), len(temps[0]))
	}
	if got, want := vehicleTemps(t, dir), append(slices.Clone(temps[1]), temps[2]...); !equalSets(got, want) {
		t.Errorf("temporary files after owner a's Open: %d, want the %d of the other owners", len(got), len(want))
	}
	for i, w := range ws[1:] {
		if err := w.Commit("owner-" + string(rune('b'+i))); err != nil {
			t.Errorf("Commit of another owner after a's Open: %v", err)
		}
	}
	a2.Close()
	b.Close()
	evil.Close()
	if got := vehicleTemps(t, dir); len(got) != 0 {
		t.Errorf("temporary files left after the owners committed: %q", got)
	}
	decode, err := Open(cfg(""))
	if err != nil {
		t.Fatalf("a decode's Open once the owners closed: %v", err)
	}
	defer decode.Close()
	if _, err := Open(cfg("a")); !errors.Is(err, ErrBusy) || !strings.Contains(err.Error(), "process "+strconv.Itoa(os.Getpid())) {
		t.Errorf("an owner's Open while a decode holds the lake: got %v, want ErrBusy naming this process", err)
	}
}

// TestOwnerRemovesOnlyItsOwn: an owner's Open removes its temporary
// files in every directory of the lake, and none of another owner's or
// of a run without one; a run without an owner removes them all.
func TestOwnerRemovesOnlyItsOwn(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "lake")
	l, err := Open(Config{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	l.Close()
	files := map[string][]string{ // name: the owners whose Open removes it
		"vehicle=k1/message=M/date=2026-10-09/.candec-a-x1.tmp":   {"a", ""},
		"vehicle=k1/message=M/date=2026-10-09/.candec-a-b-x2.tmp": {"a-b", ""},
		"vehicle=k1/message=M/date=2026-10-09/.candec-x3.tmp":     {""},
		"message=M/date=2026-10-09/.candec-a-x4.tmp":              {"a", ""},
		"_candec_ingest/a/.candec-a-x5.tmp":                       {"a", ""},
		"_candec_ingest/b/.candec-b-x6.tmp":                       {""},
		"vehicle=k1/message=M/date=2026-10-09/.candec-a-.tmp":     {""}, // no random part: no owner's
		"vehicle=k1/message=M/date=2026-10-09/notes.tmp":          nil,
		".candec-a-x7.tmp": nil, // the root's: as before owners, left
	}
	plant := func() {
		for name := range files {
			p := filepath.Join(dir, filepath.FromSlash(name))
			os.MkdirAll(filepath.Dir(p), 0o755)
			os.WriteFile(p, nil, 0o644)
		}
	}
	for _, owner := range []string{"a", "a-b", ""} {
		plant()
		l, err := Open(Config{Dir: dir, Owner: owner})
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for name, whose := range files {
			_, err := os.Lstat(filepath.Join(dir, filepath.FromSlash(name)))
			gone := errors.Is(err, os.ErrNotExist)
			want := slices.Contains(whose, owner)
			if want {
				n++
			}
			if gone != want {
				t.Errorf("owner %q: %s removed %v, want %v", owner, name, gone, want)
			}
		}
		if l.Removed() != n {
			t.Errorf("owner %q: Removed() = %d, want %d", owner, l.Removed(), n)
		}
		l.Close()
	}
}

func equalSets(a, b []string) bool {
	a, b = slices.Clone(a), slices.Clone(b)
	slices.Sort(a)
	slices.Sort(b)
	return slices.Equal(a, b)
}

// dirStoreOf opens a lake in a new directory and returns its store.
func dirStoreOf(t *testing.T) (Store, string) {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "lake")
	l, err := Open(Config{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	return l.Store(), dir
}

// TestDirStore pins the directory store's side of the Store contract:
// names, absent files, limits, whole files, and what List leaves out.
func TestDirStore(t *testing.T) {
	st, dir := dirStoreOf(t)
	if err := st.WriteFile("_candec_ingest/o/1.json", []byte("one")); err != nil {
		t.Fatal(err)
	}
	if b, err := st.ReadFile("_candec_ingest/o/1.json", 3); err != nil || string(b) != "one" {
		t.Errorf("ReadFile: got %q, %v; want \"one\"", b, err)
	}
	if _, err := st.ReadFile("_candec_ingest/o/1.json", 2); err == nil || !strings.Contains(err.Error(), "longer than 2 bytes") {
		t.Errorf("ReadFile over its limit: got %v, want an error", err)
	}
	for _, name := range []string{"_candec_ingest/o/2.json", "none/1.json"} {
		if _, err := st.ReadFile(name, 10); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("ReadFile(%s): got %v, want fs.ErrNotExist", name, err)
		}
		if err := st.Remove(name); err != nil {
			t.Errorf("Remove(%s) of no file: %v", name, err)
		}
	}
	f, err := st.Create("_candec_ingest/o/1.json")
	if err != nil {
		t.Fatal(err)
	}
	f.Write([]byte("two"))
	if b, _ := st.ReadFile("_candec_ingest/o/1.json", 10); string(b) != "one" {
		t.Errorf("before Commit: %q, want the old file", b)
	}
	f.Abort()
	f, _ = st.Create("_candec_ingest/o/3.json") // left open: a temporary file
	defer f.Abort()
	if got, err := st.List(""); err != nil || !slices.Equal(got, []string{"_candec_ingest/o/1.json", MarkerName}) {
		t.Errorf("List: got %q, %v; want the file and the marker (no lock, no temporary file)", got, err)
	}
	if got, err := st.List("message=none"); err != nil || got != nil {
		t.Errorf("List of no directory: got %q, %v; want nil", got, err)
	}
	if err := st.Remove("_candec_ingest/o/1.json"); err != nil {
		t.Fatal(err)
	}
	if got, _ := st.List("_candec_ingest"); got != nil {
		t.Errorf("List after Remove: %q, want none", got)
	}
	for _, name := range []string{"", ".", "/etc/passwd", "../x", "a/../../x", "a//b", "a/"} {
		if _, err := st.ReadFile(name, 10); err == nil {
			t.Errorf("ReadFile(%q): no error", name)
		}
		if err := st.WriteFile(name, nil); err == nil {
			t.Errorf("WriteFile(%q): no error", name)
		}
		if err := st.Remove(name); err == nil {
			t.Errorf("Remove(%q): no error", name)
		}
	}
	if _, err := st.List("../x"); err == nil {
		t.Error(`List("../x"): no error`)
	}
	if s := st.String(); s != dir+"/" {
		t.Errorf("String() = %q, want %q", s, dir+"/")
	}
}

// TestDirStoreHostile: the directory store's List, ReadFile, WriteFile
// and Remove refuse a symbolic link where the file or a directory above
// it is (ErrLink), and a named pipe where the file is (ErrNotRegular),
// naming it, at once; nothing outside the lake is read, written or
// removed.
func TestDirStoreHostile(t *testing.T) {
	const name = "_candec_ingest/o/1.json"
	type plant func(dir, out string) error
	link := func(dir, out string) error {
		return replace(filepath.Join(dir, filepath.FromSlash(name)), func(p string) error { return os.Symlink(filepath.Join(out, "1.json"), p) })
	}
	linkDir := func(dir, out string) error {
		return replace(filepath.Join(dir, "_candec_ingest", "o"), func(p string) error { return os.Symlink(out, p) })
	}
	fifo := func(dir, out string) error {
		return replace(filepath.Join(dir, filepath.FromSlash(name)), func(p string) error { return syscall.Mkfifo(p, 0o644) })
	}
	ops := map[string]func(Store) error{
		"List":      func(st Store) error { _, err := st.List(""); return err },
		"ListIn":    func(st Store) error { _, err := st.List("_candec_ingest/o"); return err },
		"ReadFile":  func(st Store) error { _, err := st.ReadFile(name, 100); return err },
		"WriteFile": func(st Store) error { return st.WriteFile(name, []byte("new")) },
		"Remove":    func(st Store) error { return st.Remove(name) },
	}
	for _, c := range []struct {
		plant string
		mk    plant
		want  error
	}{
		{"a link", link, ErrLink},
		{"a linked directory", linkDir, ErrLink},
		{"a named pipe", fifo, ErrNotRegular},
	} {
		for op, do := range ops {
			t.Run(c.plant+"/"+op, func(t *testing.T) {
				st, dir := dirStoreOf(t)
				out := t.TempDir()
				os.WriteFile(filepath.Join(out, "1.json"), []byte("PRECIOUS"), 0o644)
				if err := st.WriteFile(name, []byte("old")); err != nil {
					t.Fatal(err)
				}
				if err := c.mk(dir, out); err != nil {
					t.Fatal(err)
				}
				done := make(chan error, 1)
				go func() { done <- do(st) }()
				var err error
				select {
				case err = <-done:
				case <-time.After(10 * time.Second):
					t.Fatal("blocked")
				}
				if !errors.Is(err, c.want) || !strings.Contains(err.Error(), dir) {
					t.Errorf("got %v, want %v naming a path in %s", err, c.want, dir)
				}
				if b, _ := os.ReadFile(filepath.Join(out, "1.json")); string(b) != "PRECIOUS" {
					t.Errorf("the file outside the lake holds %q", b)
				}
				if ents, _ := os.ReadDir(out); len(ents) != 1 {
					t.Errorf("the directory outside the lake holds %d entries, want 1", len(ents))
				}
			})
		}
	}
}

// TestOwnersCreateOneLake: owners that open a new lake at the same
// moment make one marker: with the same DBC all open it; with two DBC
// hashes, the lake is one of them and every owner of the other is
// refused (ErrMixed), never both let in.
func TestOwnersCreateOneLake(t *testing.T) {
	for round := range 20 {
		dir := filepath.Join(t.TempDir(), "lake")
		const n = 4
		errs := make(chan error, n)
		lakes := make(chan *Lake, n)
		for i := range n {
			go func() {
				l, err := Open(Config{Dir: dir, Owner: "o" + strconv.Itoa(i), DBC: "sha256:" + strconv.Itoa(i%2*(round%2))})
				if err == nil {
					lakes <- l
				}
				errs <- err
			}()
		}
		var opened, mixed int
		for range n {
			switch err := <-errs; {
			case err == nil:
				opened++
			case errors.Is(err, ErrMixed):
				mixed++
			default:
				t.Errorf("round %d: Open: %v", round, err)
			}
		}
		for range opened {
			(<-lakes).Close()
		}
		b, _ := os.ReadFile(filepath.Join(dir, MarkerName))
		if round%2 == 0 && opened != n || round%2 == 1 && (opened != n/2 || mixed != n/2) {
			t.Errorf("round %d: %d opened, %d refused as mixed; want %d opened (marker %s)", round, opened, mixed, n-n/2*(round%2), b)
		}
	}
}

// TestDirStoreRemadeDir: the directory store makes a partition once and
// then trusts it, so that an ingest's commits do not pay for its
// checks again; one removed between two commits is made again.
func TestDirStoreRemadeDir(t *testing.T) {
	st, dir := dirStoreOf(t)
	for i := range 3 {
		if err := st.WriteFile("vehicle=a/message=M/date=2026-12-04/x.parquet", []byte{byte(i)}); err != nil {
			t.Fatalf("write %d: %v", i, err)
		}
		if err := os.RemoveAll(filepath.Join(dir, "vehicle=a")); err != nil {
			t.Fatal(err)
		}
	}
	if err := st.WriteFile("vehicle=a/message=M/date=2026-12-04/x.parquet", []byte("last")); err != nil {
		t.Fatal(err)
	}
	if b, err := st.ReadFile("vehicle=a/message=M/date=2026-12-04/x.parquet", 10); err != nil || string(b) != "last" {
		t.Errorf("got %q, %v; want \"last\"", b, err)
	}
}
