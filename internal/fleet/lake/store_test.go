package lake

import (
	"bytes"
	"errors"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/yukart/candec/dbc"
	"github.com/yukart/candec/decoder"
	"github.com/yukart/candec/frame"
)

// oneFrame writes one frame of message 0x0A0, MCU_MotorStatus (day
// 2026-10-09), to w.
func oneFrame(t *testing.T, db *dbc.Database, w *Writer) error {
	t.Helper()
	f := frame.Frame{Time: 1791563856e9, ID: 0x0A0, Len: 8, Data: [64]byte{0xE8, 0x03, 0x07}}
	d := decoder.New(db)
	_, vals := d.Decode(&f, make([]decoder.Value, 0, d.MaxSignals()))
	if len(vals) == 0 {
		t.Fatal("frame 0x0A0 decodes to no value")
	}
	return w.Write(&f, "can0", vals)
}

func loadCarDBC(t *testing.T) *dbc.Database {
	t.Helper()
	db, err := dbc.Load(carDBC)
	if err != nil {
		t.Fatal(err)
	}
	return db
}

// listed returns the names of every file below dir, as a Store names
// them, but the lock file.
func listed(t *testing.T, dir string) []string {
	t.Helper()
	var names []string
	filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			rel, _ := filepath.Rel(dir, p)
			if rel != LockName {
				names = append(names, filepath.ToSlash(rel))
			}
		}
		return nil
	})
	slices.Sort(names)
	return names
}

// TestNewWriterIn: a Writer's tables go below its prefix, and Committed
// names them; a prefix that is absolute or has a ".", ".." or empty
// element is refused by Write and Commit, and nothing is written.
func TestNewWriterIn(t *testing.T) {
	const file = "message=MCU_MotorStatus/date=2026-10-09/can0-0123456789abcdef.parquet"
	db := loadCarDBC(t)
	for _, c := range []struct {
		prefix string
		want   string // the file Committed names; "" when refused
	}{
		{"", file},
		{"vehicle=kart01", "vehicle=kart01/" + file},
		{"vehicle=" + Escape("../kart/01"), "vehicle=%2E.%2Fkart%2F01/" + file},
		{"vehicle=" + Escape(""), "vehicle=__HIVE_DEFAULT_PARTITION__/" + file},
		{"fleet=eu/vehicle=kart01", "fleet=eu/vehicle=kart01/" + file},
		{"..", ""},
		{"../vehicle=kart01", ""},
		{"vehicle=kart01/..", ""},
		{"vehicle=kart01/../..", ""},
		{"/tmp/vehicle=kart01", ""},
		{"vehicle=a//b", ""},
		{"vehicle=a/./b", ""},
		{".", ""},
		{"vehicle=a/", ""},
	} {
		t.Run(strconv.Quote(c.prefix), func(t *testing.T) {
			top := t.TempDir()
			dir := filepath.Join(top, "lake")
			lk, err := Open(Config{Dir: dir})
			if err != nil {
				t.Fatal(err)
			}
			defer lk.Close()
			w := lk.NewWriterIn(c.prefix)
			werr := oneFrame(t, db, w)
			cerr := w.Commit("0123456789abcdef")
			if c.want == "" {
				for _, err := range []error{werr, cerr} {
					if err == nil || !strings.Contains(err.Error(), strconv.Quote(c.prefix)) {
						t.Errorf("got %v, want an error naming the prefix %q", err, c.prefix)
					}
				}
				if got := listed(t, dir); !slices.Equal(got, []string{MarkerName}) {
					t.Errorf("the lake holds %q, want only its marker", got)
				}
				if ents, _ := os.ReadDir(top); len(ents) != 1 {
					t.Errorf("beside the lake: %d entries, want none", len(ents)-1)
				}
				return
			}
			if werr != nil || cerr != nil {
				t.Fatalf("Write: %v, Commit: %v", werr, cerr)
			}
			if got := w.Committed(); !slices.Equal(got, []string{c.want}) {
				t.Errorf("Committed() = %q, want %q", got, c.want)
			}
			if got := listed(t, dir); !slices.Equal(got, []string{MarkerName, c.want}) {
				t.Errorf("the lake holds %q, want the marker and %s", got, c.want)
			}
		})
	}
}

// TestCommitted: Committed names the files of the last Commit only,
// sorted, one per table, and none after an Abort.
func TestCommitted(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "lake")
	lk, err := Open(Config{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	defer lk.Close()
	w := lk.NewWriterIn("vehicle=k1")
	var all []string
	for _, input := range []string{"k1-0001", "k1-0002"} {
		decodeIdle(t, w.Write)
		if err := w.Commit(input); err != nil {
			t.Fatal(err)
		}
		got := w.Committed()
		if len(got) == 0 || !slices.IsSorted(got) {
			t.Fatalf("Committed() = %q, want the files, sorted", got)
		}
		for _, name := range got {
			if !strings.HasPrefix(name, "vehicle=k1/message=") || !strings.HasSuffix(name, "/can0-"+input+".parquet") {
				t.Errorf("Committed() has %s, want vehicle=k1/message=…/can0-%s.parquet", name, input)
			}
		}
		if files := lakeFiles(t, filepath.Join(dir, "vehicle=k1")); len(files) != len(all)+len(got) {
			t.Errorf("after %s: %d files in the lake, want %d", input, len(files), len(all)+len(got))
		}
		all = append(all, got...)
	}
	if w.Files() != len(all) {
		t.Errorf("Files() = %d, want %d", w.Files(), len(all))
	}
	decodeIdle(t, w.Write)
	w.Abort()
	if err := w.Commit("k1-0003"); err != nil || len(w.Committed()) != 0 {
		t.Errorf("a Commit of nothing: %v, Committed() = %q; want none", err, w.Committed())
	}
	for _, input := range []string{"", "../x", "a/b", ".hidden", "k1 1"} {
		decodeIdle(t, w.Write)
		if err := w.Commit(input); err == nil || !strings.Contains(err.Error(), strconv.Quote(input)) {
			t.Errorf("Commit(%q): got %v, want an error naming it", input, err)
		}
		w.Abort()
	}
	if got := lakeFiles(t, dir); len(got) != len(all) {
		t.Errorf("%d files in the lake, want %d", len(got), len(all))
	}
}

// errRefused is the error of a failingStore.
var errRefused = errors.New("the store refuses the write")

// failingStore is a Store whose files with fail in their name fail to
// commit; every file when fail is "". It is no TempStore: a Writer
// writes its tables to local files and copies them into it.
type failingStore struct {
	Store
	fail string
}

func (s failingStore) Create(rel string) (File, error) {
	f, err := s.Store.Create(rel)
	if err != nil || !strings.Contains(rel, s.fail) {
		return f, err
	}
	return failingFile{f}, nil
}

type failingFile struct{ File }

func (f failingFile) Commit() error {
	f.Abort()
	return errRefused
}

// TestCommitFails: through a Store that is not a TempStore, a Writer
// writes the same files as into the directory, byte for byte; a file
// the Store fails to commit never becomes visible, Commit returns the
// Store's error, Committed names the files that did, and no local
// temporary file is left.
func TestCommitFails(t *testing.T) {
	ref := filepath.Join(t.TempDir(), "ref")
	writeLake(t, Config{Dir: ref}, nil)
	want := listed(t, ref)
	for _, c := range []struct {
		name, fail string
		visible    func(name string) bool // which files of ref become visible
	}{
		{"every file", "", func(string) bool { return false }},
		{"one file", "message=MCU_MotorStatus/", func(n string) bool { return !strings.Contains(n, "MCU_MotorStatus") }},
		{"no file", "\x00", func(string) bool { return true }},
	} {
		t.Run(c.name, func(t *testing.T) {
			spool := t.TempDir()
			t.Setenv("TMPDIR", spool)
			dir := filepath.Join(t.TempDir(), "lake")
			base, err := Open(Config{Dir: dir})
			if err != nil {
				t.Fatal(err)
			}
			defer base.Close()
			lk, err := Open(Config{Dir: dir, Store: failingStore{base.Store(), c.fail}})
			if err != nil {
				t.Fatal(err)
			}
			w := lk.NewWriter()
			decodeIdle(t, w.Write)
			err = w.Commit("0123456789abcdef")
			w.Abort()
			var wantFiles []string
			for _, n := range want {
				if n != MarkerName && c.visible(n) {
					wantFiles = append(wantFiles, n)
				}
			}
			if (len(wantFiles) == len(want)-1) != (err == nil) || err != nil && !errors.Is(err, errRefused) {
				t.Errorf("Commit: got %v, want %v", err, errRefused)
			}
			if got := w.Committed(); !slices.Equal(got, wantFiles) {
				t.Errorf("Committed() = %q, want %q", got, wantFiles)
			}
			if got := listed(t, dir); !slices.Equal(got, append([]string{MarkerName}, wantFiles...)) {
				t.Errorf("the lake holds %q, want the marker and %q", got, wantFiles)
			}
			for _, n := range wantFiles {
				a, _ := os.ReadFile(filepath.Join(ref, n))
				b, _ := os.ReadFile(filepath.Join(dir, n))
				if !bytes.Equal(a, b) {
					t.Errorf("%s differs from the file written into the directory", n)
				}
			}
			if ents, _ := os.ReadDir(spool); len(ents) != 0 {
				t.Errorf("%d local temporary files left, want none", len(ents))
			}
		})
	}
}

// unescape reverses Escape.
func unescape(t *testing.T, s string) string {
	t.Helper()
	if s == defaultPartition {
		return ""
	}
	var b []byte
	for i := 0; i < len(s); i++ {
		if s[i] != '%' {
			b = append(b, s[i])
			continue
		}
		n, err := strconv.ParseUint(s[i+1:i+3], 16, 8)
		if err != nil || strings.ToUpper(s[i+1:i+3]) != s[i+1:i+3] {
			t.Fatalf("unescape %q: %%%s", s, s[i+1:i+3])
		}
		b = append(b, byte(n))
		i += 2
	}
	return string(b)
}

// checkEscape fails unless Escape(s) is one safe path element, of
// letters, digits, '_', '-', '.' (not leading) and %XX only, that
// unescapes to s.
func checkEscape(t *testing.T, s string) string {
	t.Helper()
	e := Escape(s)
	if e == "" || e == "." || e == ".." || strings.ContainsAny(e, `/\`) || e[0] == '.' || path.Clean(e) != e {
		t.Fatalf("Escape(%q) = %q: not a safe path element", s, e)
	}
	if strings.Trim(e, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-.%") != "" {
		t.Fatalf("Escape(%q) = %q: a byte it should have escaped", s, e)
	}
	if got := unescape(t, e); got != s {
		t.Fatalf("unescape(Escape(%q)) = %q", s, got)
	}
	return e
}

func TestEscape(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"kart01", "kart01"},
		{"MCU_MotorStatus", "MCU_MotorStatus"},
		{"kart.01-a", "kart.01-a"},
		{"", "__HIVE_DEFAULT_PARTITION__"},
		{"__HIVE_DEFAULT_PARTITION__", "%5F_HIVE_DEFAULT_PARTITION__"},
		{".", "%2E"},
		{"..", "%2E."},
		{"../etc", "%2E.%2Fetc"},
		{"a/b", "a%2Fb"},
		{`a\b`, "a%5Cb"},
		{"a b", "a%20b"},
		{"%41", "%2541"},
		{"é", "%C3%A9"},
		{"\x00", "%00"},
	} {
		if got := checkEscape(t, c.in); got != c.want {
			t.Errorf("Escape(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

// FuzzEscape: whatever the string, its escape is one safe path element
// that unescapes to it (so two strings never share one).
func FuzzEscape(f *testing.F) {
	for _, s := range []string{"", ".", "..", "a/../b", "__HIVE_DEFAULT_PARTITION__", "%", "kart01", "\xff\xfe"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) { checkEscape(t, s) })
}
