package outformat

import (
	"bytes"
	"errors"
	"slices"
	"strings"
	"testing"
)

// TestLookup: every name and alias finds its row; an unknown name is an
// error naming the build's formats; a name this build leaves out says
// so (ErrNotInBuild). Each build has json and csv, and Parquet or its
// absence, never both.
func TestLookup(t *testing.T) {
	car := !slices.ContainsFunc(formats, func(f Format) bool { return f.Name == "parquet" })
	tests := []struct {
		name, want string
		binary     bool
	}{
		{"json", "json", false},
		{"jsonl", "json", false},
		{"csv", "csv", false},
		{"parquet", "parquet", true},
	}
	for _, tt := range tests {
		f, err := Lookup(tt.name)
		if tt.want == "parquet" && car {
			if !errors.Is(err, ErrNotInBuild) {
				t.Errorf("Lookup(%q) in the car's build: got %v, want ErrNotInBuild", tt.name, err)
			}
			continue
		}
		if err != nil || f.Name != tt.want || f.Binary != tt.binary || f.New == nil {
			t.Errorf("Lookup(%q): got %+v, %v; want the %s row (binary %v)", tt.name, f, err, tt.want, tt.binary)
		}
	}
	want := "json, csv or parquet"
	if car {
		want = "json or csv"
	}
	if got := Names(); got != want {
		t.Errorf("Names: got %q, want %q", got, want)
	}
	if _, err := Lookup("xml"); err == nil || errors.Is(err, ErrNotInBuild) || !strings.Contains(err.Error(), `unknown format "xml" (want `+want+")") {
		t.Errorf("Lookup(xml): got %v, want unknown naming %s", err, want)
	}
	lf, ok := LakeFormat()
	if ok == car || ok && lf.Name != "parquet" {
		t.Errorf("LakeFormat: got %q, %v; want parquet in the developer's build only", lf.Name, ok)
	}
}

// TestTable: each row has a name, an extension and a writer; no two
// rows share a name or an alias; a writer of text writes nothing before
// its first value but (CSV) the header at Close.
func TestTable(t *testing.T) {
	seen := map[string]bool{}
	for _, f := range formats {
		if f.Name == "" || !strings.HasPrefix(f.Ext, ".") || f.New == nil {
			t.Errorf("row %+v: want a name, an extension and a writer", f)
		}
		for _, n := range append([]string{f.Name}, f.Aliases...) {
			if seen[n] {
				t.Errorf("%q names two rows", n)
			}
			seen[n] = true
		}
		if f.Binary {
			continue
		}
		var b bytes.Buffer
		s, err := f.New(&b, func() (string, error) { return "", errors.New("a text format read the DBCs' hash") })
		if err != nil {
			t.Fatalf("%s: %v", f.Name, err)
		}
		if err := s.Close(); err != nil || b.Len() != 0 || s.Lines() != 0 {
			t.Errorf("%s: an empty output: got %q, %d lines, %v; want nothing", f.Name, b.String(), s.Lines(), err)
		}
	}
}
