package dbc

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// TestBusFilesSet: every form of --dbc reads as it looks, repeated
// values add up, and each mistake is an error naming the item.
func TestBusFilesSet(t *testing.T) {
	for _, c := range []struct {
		name    string
		values  []string
		want    BusFiles
		wantErr string
	}{
		{"one file", []string{"a.dbc"}, BusFiles{All: []string{"a.dbc"}}, ""},
		{"files for every interface", []string{"a.dbc,b.dbc"}, BusFiles{All: []string{"a.dbc", "b.dbc"}}, ""},
		{"repeated", []string{"a.dbc", "b.dbc"}, BusFiles{All: []string{"a.dbc", "b.dbc"}}, ""},
		{"one interface", []string{"can0=pt.dbc"}, BusFiles{Interfaces: map[string][]string{"can0": {"pt.dbc"}}}, ""},
		{"two interfaces in one value", []string{"can0=pt.dbc,can1=adas.dbc"},
			BusFiles{Interfaces: map[string][]string{"can0": {"pt.dbc"}, "can1": {"adas.dbc"}}}, ""},
		{"two interfaces repeated", []string{"can0=pt.dbc", "can1=adas.dbc"},
			BusFiles{Interfaces: map[string][]string{"can0": {"pt.dbc"}, "can1": {"adas.dbc"}}}, ""},
		{"two files of one interface", []string{"can0=pt.dbc,extra.dbc,can1=adas.dbc"},
			BusFiles{Interfaces: map[string][]string{"can0": {"pt.dbc", "extra.dbc"}, "can1": {"adas.dbc"}}}, ""},
		{"every interface and one", []string{"a.dbc,can1=adas.dbc"},
			BusFiles{All: []string{"a.dbc"}, Interfaces: map[string][]string{"can1": {"adas.dbc"}}}, ""},
		{"a later value's file is for every interface", []string{"can1=adas.dbc", "a.dbc"},
			BusFiles{All: []string{"a.dbc"}, Interfaces: map[string][]string{"can1": {"adas.dbc"}}}, ""},
		{"blanks", []string{" can0 = pt.dbc , , b.dbc "}, BusFiles{Interfaces: map[string][]string{"can0": {"pt.dbc", "b.dbc"}}}, ""},
		{"empty value", []string{""}, BusFiles{}, "want [IFACE=]FILE[,FILE]: empty value"},
		{"blank", []string{" "}, BusFiles{}, "empty value"},
		{"only commas", []string{" , ,"}, BusFiles{}, "empty value"},
		{"empty interface", []string{"=pt.dbc"}, BusFiles{}, `"=pt.dbc" names no interface before =`},
		{"empty file", []string{"can0="}, BusFiles{}, `"can0=" names no file after =`},
		{"empty file before another", []string{"can0=,can1=b.dbc"}, BusFiles{}, `"can0=" names no file after =`},
		{"a path is no interface", []string{"dir/a=b.dbc"}, BusFiles{}, `"dir/a" is no interface name`},
		{"one interface twice", []string{"can0=pt.dbc", "can0=adas.dbc"}, BusFiles{},
			"can0 has two DBCs, pt.dbc and adas.dbc: give one can0=FILE[,FILE] (or was another interface meant?)"},
		{"one interface twice in a value", []string{"can0=pt.dbc,can0=adas.dbc"}, BusFiles{}, "can0 has two DBCs"},
	} {
		t.Run(c.name, func(t *testing.T) {
			var got BusFiles
			var err error
			for _, v := range c.values {
				if err = got.Set(v); err != nil {
					break
				}
			}
			if c.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), c.wantErr) || !errors.Is(err, ErrBusFiles) {
					t.Fatalf("got error %v, want ErrBusFiles with %q", err, c.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, c.want) {
				t.Errorf("got %+v, want %+v", got, c.want)
			}
			// String reads back as the same files.
			var again BusFiles
			if err := again.Set(got.String()); err != nil || !reflect.DeepEqual(again, got) {
				t.Errorf("String %q reads back as %+v (%v), want %+v", got.String(), again, err, got)
			}
		})
	}
}

// TestBusFilesHash: the lake's DBC identity changes with the files'
// contents and with which interface a file decodes, not with the order
// the interfaces were named in. (It was decodejob's TestDBCsHash.)
func TestBusFilesHash(t *testing.T) {
	dir := t.TempDir()
	a := filepath.Join(dir, "a.dbc")
	b := filepath.Join(dir, "b.dbc")
	os.WriteFile(a, []byte("VERSION \"a\"\n"), 0o644)
	os.WriteFile(b, []byte("VERSION \"b\"\n"), 0o644)
	hash := func(d BusFiles) string {
		t.Helper()
		h, err := d.Hash(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		return h
	}
	all := hash(BusFiles{All: []string{a}})
	tests := []struct {
		name string
		d    BusFiles
		same bool
	}{
		{"same", BusFiles{All: []string{a}}, true},
		{"other contents", BusFiles{All: []string{b}}, false},
		{"by interface", BusFiles{Interfaces: map[string][]string{"can0": {a}}}, false},
	}
	for _, tt := range tests {
		if got := hash(tt.d) == all; got != tt.same {
			t.Errorf("%s: same hash %v, want %v", tt.name, got, tt.same)
		}
	}
	x := hash(BusFiles{Interfaces: map[string][]string{"can0": {a}, "can1": {b}}})
	for range 5 { // map order must not matter
		if y := hash(BusFiles{Interfaces: map[string][]string{"can1": {b}, "can0": {a}}}); y != x {
			t.Fatalf("got %s, want %s", y, x)
		}
	}
	// The value is the lake's record: it must not change between
	// versions (a lake would refuse its own files). Worked out apart:
	// sha256("*\x00" "1\x00" "12\x00" contents).
	if want := "sha256:912779840221e537ada6bb613da8b9286f9ae32f907041afefd78c4a0457d7b9"; all != want {
		t.Errorf("got %s, want %s", all, want)
	}
}

// TestLoadBuses: each interface's files are one database (a set named
// twice is loaded once), a missing file's error names the file and the
// interface, and Merged joins the interfaces' messages or names the
// clash of two definitions of one ID.
func TestLoadBuses(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	pt := write("pt.dbc", "BO_ 256 Engine: 8 ECU\n SG_ Rpm : 0|16@1+ (1,0) [0|8000] \"rpm\" Dash\n")
	adas := write("adas.dbc", "BO_ 512 Track: 8 Radar\n SG_ Dist : 0|16@1+ (0.1,0) [0|300] \"m\" ECU\n")
	clash := write("clash.dbc", "BO_ 256 Other: 8 Radar\n SG_ X : 0|8@1+ (1,0) [0|255] \"\" ECU\n")
	ctx := context.Background()

	b, err := LoadBuses(ctx, BusFiles{Interfaces: map[string][]string{"can0": {pt}, "can1": {adas}, "can2": {pt}}})
	if err != nil {
		t.Fatal(err)
	}
	if b.All != nil || b.Interfaces["can0"] != b.Interfaces["can2"] || b.Interfaces["can0"] == b.Interfaces["can1"] {
		t.Errorf("got All %p, can0 %p, can1 %p, can2 %p: want no All, can0 and can2 one database, can1 another",
			b.All, b.Interfaces["can0"], b.Interfaces["can1"], b.Interfaces["can2"])
	}
	if _, ok := b.Single(); ok {
		t.Error("Single: got ok for two sets of files")
	}
	m, err := b.Merged()
	if err != nil {
		t.Fatal(err)
	}
	if m.DB.Message(256, false) == nil || m.DB.Message(512, false) == nil {
		t.Errorf("Merged lacks a message: %v", m.DB.Messages)
	}
	one, err := LoadBuses(ctx, BusFiles{Interfaces: map[string][]string{"can0": {pt}}})
	if err != nil {
		t.Fatal(err)
	}
	if db, ok := one.Single(); !ok || db != one.Interfaces["can0"] {
		t.Errorf("Single of one interface: got %p %v, want its database", db, ok)
	}

	missing := filepath.Join(dir, "nope.dbc")
	_, err = LoadBuses(ctx, BusFiles{Interfaces: map[string][]string{"can0": {pt}, "can1": {missing}}})
	if err == nil || !strings.Contains(err.Error(), "open "+missing+": ") || !strings.HasSuffix(err.Error(), "(the DBC of can1)") ||
		strings.Contains(err.Error(), "can1="+missing) {
		t.Errorf("missing file: got %v, want the file named, and can1", err)
	}
	if _, err := LoadBuses(ctx, BusFiles{}); !errors.Is(err, ErrBusFiles) {
		t.Errorf("no files: got %v, want ErrBusFiles", err)
	}

	testMergedClash(t, pt, clash)
	const j1939 = "BA_DEF_ \"ProtocolType\" STRING ;\nBA_ \"ProtocolType\" \"J1939\";\n"
	eec1 := write("eec1.dbc", j1939+"BO_ 2364540158 EEC1: 8 X\n SG_ Rpm : 24|16@1+ (0.125,0) [0|8031] \"rpm\" X\n")
	other := write("other.dbc", j1939+"BO_ 2364540158 Other: 8 X\n SG_ Y : 0|8@1+ (1,0) [0|255] \"\" X\n")
	j, err := LoadBuses(ctx, BusFiles{Interfaces: map[string][]string{"can0": {eec1}, "can1": {other}}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err = j.Merged(); !errors.Is(err, ErrConflict) || !strings.Contains(err.Error(), "EEC1 ("+eec1+") and Other ("+other+") share 0CF004FE") {
		t.Errorf("J1939 clash: got %v, want ErrConflict naming both", err)
	}
	// Another sender of the same PGN on another bus: its frames would
	// find the first by PGN.
	sa := write("sa.dbc", j1939+"BO_ 2364540159 EEC1b: 8 X\n SG_ Y : 0|8@1+ (1,0) [0|255] \"\" X\n")
	j, err = LoadBuses(ctx, BusFiles{Interfaces: map[string][]string{"can0": {eec1}, "can1": {sa}}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err = j.Merged(); !errors.Is(err, ErrConflict) || !strings.Contains(err.Error(), "share PGN 61444") {
		t.Errorf("J1939 PGN clash: got %v, want ErrConflict naming the PGN", err)
	}
	// Two of one PGN in one database are its own affair.
	j, err = LoadBuses(ctx, BusFiles{Interfaces: map[string][]string{"can0": {eec1, sa}, "can1": {pt}}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err = j.Merged(); err != nil {
		t.Errorf("one database's two messages of one PGN: %v", err)
	}
}

// testMergedClash: two interfaces' messages of one ID are both in the
// merged database, the later under an ID of its own, and the
// interfaces' databases are left as they were.
func testMergedClash(t *testing.T, pt, clash string) {
	c, err := LoadBuses(context.Background(), BusFiles{Interfaces: map[string][]string{"can0": {pt}, "can1": {clash}}})
	if err != nil {
		t.Fatal(err)
	}
	m, err := c.Merged()
	if err != nil {
		t.Fatal(err)
	}
	engine, other := c.Interfaces["can0"].Messages[0], c.Interfaces["can1"].Messages[0]
	if got := m.DB.Message(256, false); got == nil || got != m.Of(engine) || got.Name != "Engine" {
		t.Errorf("ID 256 in the merged database: got %v, want the copy of can0's Engine", got)
	}
	o := m.Of(other)
	if o == nil || o.Name != "Other" || o.ID == 256 || m.DB.Message(o.ID, false) != o {
		t.Fatalf("can1's Other in the merged database: got %+v, want it under an ID of its own", o)
	}
	if o.Signals[0].Message != o || other.Signals[0].Message != other || other.ID != 256 || other.Signals[0].Index != 0 {
		t.Errorf("the copy's signal belongs to %p (want %p); the original's to %p (want %p), ID %d, index %d",
			o.Signals[0].Message, o, other.Signals[0].Message, other, other.ID, other.Signals[0].Index)
	}
}

// FuzzBusFilesSet: any --dbc value is read or refused with ErrBusFiles,
// never a panic; what is read reads back the same from String.
func FuzzBusFilesSet(f *testing.F) {
	for _, s := range []string{"a.dbc", "can0=a.dbc,can1=b.dbc", "can0=a,b,can1=c", "=a", "can0=", ",", "a=b=c", "can0=a,can0=b", " x / y = z "} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, v string) {
		var b BusFiles
		if err := b.Set(v); err != nil {
			if !errors.Is(err, ErrBusFiles) {
				t.Fatalf("Set(%q): %v, not ErrBusFiles", v, err)
			}
			return
		}
		var again BusFiles
		if err := again.Set(b.String()); err != nil || !reflect.DeepEqual(again, b) {
			t.Fatalf("Set(%q) = %+v; String %q reads back as %+v (%v)", v, b, b.String(), again, err)
		}
	})
}
