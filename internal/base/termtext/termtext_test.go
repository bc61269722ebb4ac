package termtext

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestClean(t *testing.T) {
	for _, tt := range []struct{ in, want string }{
		{"", ""},
		{"MOT_Speed 1510 rpm", "MOT_Speed 1510 rpm"},
		{"21.5 °C (Ω, 速度)", "21.5 °C (Ω, 速度)"},
		{"\x1b]0;pwned\x07", `\x1b]0;pwned\a`},
		{"\x1b[2J\x1b[H", `\x1b[2J\x1b[H`},
		{"a\nb\r\tc", `a\nb\r\tc`},
		{"del\x7f", `del\x7f`},
		{"csi\u009b2J", `csi\u009b2J`},
		{"rtl\u202eevil\u2066", `rtl\u202eevil\u2066`},
		{"can\xff", `can\xff`},
		{"°\xe2\x82", `°\xe2\x82`},
		{"back\\slash", `back\slash`},
	} {
		got := Clean(tt.in)
		if got != tt.want {
			t.Errorf("Clean(%q): got %s, want %s", tt.in, got, tt.want)
		}
		for _, r := range got {
			if r < 0x20 || r >= 0x7f && r <= 0x9f || r == utf8.RuneError {
				t.Errorf("Clean(%q) = %q holds %U", tt.in, got, r)
			}
		}
	}
	clean := "21.5 °C"
	if n := testing.AllocsPerRun(100, func() { Clean(clean) }); n != 0 {
		t.Errorf("Clean of clean text: %v allocations, want 0", n)
	}
}

func FuzzClean(f *testing.F) {
	f.Add("\x1b]0;x\x07°C\xff")
	f.Fuzz(func(t *testing.T, s string) {
		got := Clean(s)
		if !utf8.ValidString(got) {
			t.Fatalf("Clean(%q) = %q: not UTF-8", s, got)
		}
		for _, r := range got {
			if r < 0x20 || r >= 0x7f && r <= 0x9f {
				t.Fatalf("Clean(%q) = %q holds %U", s, got, r)
			}
		}
		q := Quote(s)
		// The longest escape is \U0010ffff, ten characters.
		if n := utf8.RuneCountInString(q); n > MaxQuote*10+2 {
			t.Fatalf("Quote(%q) is %d characters", s, n)
		}
	})
}

func TestCut(t *testing.T) {
	for _, tt := range []struct {
		in   string
		n    int
		want string
	}{
		{"abcdef", 0, "abcdef"},
		{"abcdef", 6, "abcdef"},
		{"abcdef", 5, "abcd…"},
		{"°°°°°°", 3, "°°…"},
		{"ab", 1, "…"},
		{"a", 1, "a"},
	} {
		if got := Cut(tt.in, tt.n); got != tt.want {
			t.Errorf("Cut(%q, %d): got %q, want %q", tt.in, tt.n, got, tt.want)
		}
	}
}

func TestQuote(t *testing.T) {
	long := strings.Repeat("x", 10<<20)
	exact := strings.Repeat("y", MaxQuote)
	for _, tt := range []struct{ in, want string }{
		{"BO_", `"BO_"`},
		{"\x1b[2J", `"\x1b[2J"`},
		{"°C", `"°C"`},
		{exact, `"` + exact + `"`},
		{exact + "z", `"` + exact[:MaxQuote-1] + `…"`},
		{long, `"` + long[:MaxQuote-1] + `…"`},
		{strings.Repeat("\xff", 200), `"` + strings.Repeat(`\xff`, MaxQuote-1) + `…"`},
	} {
		if got := Quote(tt.in); got != tt.want {
			t.Errorf("Quote(%.20q…): got %.120s, want %.120s", tt.in, got, tt.want)
		}
	}
}

// TestCopies checks that each library package's copy of Quote (they
// import only the standard library, or no internal package) is the same
// function.

func TestCleanLines(t *testing.T) {
	in := "1 messages\n  BO_ 1 M\x1b[31m: unit \"\x9b\"\r\n"
	want := "1 messages\n  BO_ 1 M\\x1b[31m: unit \"\\x9b\"\\r\n"
	if got := CleanLines(in); got != want {
		t.Errorf("CleanLines: got %q, want %q", got, want)
	}
}

func TestKey(t *testing.T) {
	long := strings.Repeat("k", MaxQuote+1)
	for _, tt := range []struct{ in, want string }{
		{"max_rate", "max_rate"},
		{"", ""},
		{"a\x1bb", `"a\x1bb"`},
		{"dévié", `"dévié"`},
		{long, Quote(long)},
		{long[:MaxQuote], long[:MaxQuote]},
	} {
		if got := Key(tt.in); got != tt.want {
			t.Errorf("Key(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}
