package dbc

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestLoadNoMessages: a file that defines no message is refused by Load,
// naming the file, while Parse still takes it (tools and tests parse
// snippets).
func TestLoadNoMessages(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	good := write("good.dbc", "BO_ 291 Speed: 8 ECU\n SG_ Kmh : 0|16@1+ (0.1,0) [0|300] \"km/h\" Dash\n")
	capture := write("idle.log", "(1791563856.001301) can0 18FF50E5#0000000000000000\n(1791563856.002000) can0 123#00\n")
	empty := write("empty.dbc", "")
	tables := write("tables.dbc", "VERSION \"\"\nBU_: ECU\nVAL_TABLE_ Gear 0 \"P\" 1 \"R\" ;\n")
	for _, c := range []struct {
		name  string
		files []string
		bad   string // the file the error names; "" for success
	}{
		{"good", []string{good}, ""},
		{"capture", []string{capture}, capture},
		{"empty", []string{empty}, empty},
		{"value tables only", []string{tables}, tables},
		{"good and a capture", []string{good, capture}, capture},
		{"good and value tables", []string{good, tables}, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			db, err := Load(c.files...)
			if c.bad == "" {
				if err != nil || len(db.Messages) != 1 {
					t.Fatalf("got %v, want one message", err)
				}
				return
			}
			want := c.bad + ":1:1: no messages (no BO_ line): is this a DBC file?"
			if err == nil || err.Error() != want || !errors.Is(err, ErrNoMessages) {
				t.Fatalf("got %v, want %s (ErrNoMessages)", err, want)
			}
		})
	}
	if f, err := Parse("snippet.dbc", []byte("VERSION \"\"\n")); err != nil || len(f.Messages) != 0 {
		t.Fatalf("Parse of a snippet without messages: got %v, want no error", err)
	}
}

// TestDescribeNumbers: ranges, factors and offsets are written as in the
// DBC, never with an exponent a DBC would not use.
func TestDescribeNumbers(t *testing.T) {
	for _, c := range []struct {
		v    float64
		want string
	}{
		{16777215, "16777215"},
		{0.1, "0.1"},
		{-40, "-40"},
		{0, "0"},
		{0.000125, "0.000125"},
		{4294967295, "4294967295"},
		{1.8446744073709552e19, "18446744073709552000"},
		{1e30, "1e+30"},
	} {
		if got := num(c.v); got != c.want {
			t.Errorf("num(%v) = %s, want %s", c.v, got, c.want)
		}
	}
	db, err := Compile(mustParse(t, "BO_ 1 M: 8 E\n SG_ S : 0|24@1+ (1,0) [0|16777215] \"\" E\n"))
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	db.Describe(&b)
	if !strings.Contains(b.String(), "[0|16777215]") {
		t.Errorf("Describe: got\n%s\nwant the range [0|16777215]", b.String())
	}
}

func mustParse(t *testing.T, src string) *File {
	t.Helper()
	f, err := Parse("t.dbc", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	return f
}
