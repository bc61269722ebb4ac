package dbc

import (
	"fmt"
	"strings"
	"testing"
)

func TestLexer(t *testing.T) {
	tests := []struct {
		src  string
		want string // kind:text@line:col, space separated
	}{
		{`SG_ S m1M : 0|8@1-`, `I:SG_@1:1 I:S@1:5 I:m1M@1:7 P::@1:11 N:0@1:13 P:|@1:14 N:8@1:15 P:@@1:16 N:1@1:17 P:-@1:18`},
		{`(1E-005,-3.4E+038) [0.5|.25]`, `P:(@1:1 N:1E-005@1:2 P:,@1:8 P:-@1:9 N:3.4E+038@1:10 P:)@1:18 P:[@1:20 N:0.5@1:21 P:|@1:24 N:.25@1:25 P:]@1:28`},
		// SG_MUL_VAL_ ranges: the dash is not a sign of the second number.
		{`1-1, 3-5;`, `N:1@1:1 P:-@1:2 N:1@1:3 P:,@1:4 N:3@1:6 P:-@1:7 N:5@1:8 P:;@1:9`},
		// A word that starts with a digit but is no number is an identifier.
		{`1st 0x1F 1e`, `I:1st@1:1 I:0x1F@1:5 I:1e@1:10`},
		// Strings may span lines; \" is a quote; CR LF inside becomes LF.
		{"CM_ \"a \\\"b\\\"\r\nc\" ;", "I:CM_@1:1 S:a_\"b\"\nc@1:5 P:;@2:4"},
		{"// comment\n  BO_ // another\nx", `I:BO_@2:3 I:x@3:1`},
		// Columns count characters, not bytes.
		{"\"äö\" ü_1 °", `S:äö@1:1 I:ü_1@1:6 O:°@1:10`},
		{`"open`, `B:@1:1`},
		{"$", `O:$@1:1`},
	}
	for _, tt := range tests {
		l := newLexer(tt.src)
		var got []string
		for tok := l.next(); tok.kind != tEOF; tok = l.next() {
			kind := "?INSPOB"[tok.kind]
			got = append(got, fmt.Sprintf("%c:%s@%d:%d", kind, strings.ReplaceAll(tok.text, " ", "_"), tok.line, tok.col))
		}
		if g := strings.Join(got, " "); g != tt.want {
			t.Errorf("lex %q:\n got %s\nwant %s", tt.src, g, tt.want)
		}
	}
}

func TestLexerStartOfLine(t *testing.T) {
	l := newLexer("BO_ 1\n  SG_ x")
	var got []bool
	for tok := l.next(); tok.kind != tEOF; tok = l.next() {
		got = append(got, tok.bol)
	}
	want := []bool{true, false, true, false}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("bol: got %v, want %v", got, want)
	}
}

func TestDecodeCP1252(t *testing.T) {
	src := []byte{'a', 0x80, 0x81, 0x9F, 0xA0, 0xB0, 0xE4, 0xFF}
	got := decodeCP1252(src)
	want := "a\u20AC\u0081\u0178\u00A0°äÿ"
	if got != want {
		t.Errorf("decodeCP1252: got %q, want %q", got, want)
	}
	line, col := firstInvalidUTF8([]byte("ab\ncä\xb0"))
	if line != 2 || col != 3 {
		t.Errorf("firstInvalidUTF8: got %d:%d, want 2:3", line, col)
	}
}

func TestLastByte(t *testing.T) {
	tests := []struct {
		order         ByteOrder
		start, length int
		want          int
	}{
		{LittleEndian, 0, 8, 0},
		{LittleEndian, 0, 9, 1},
		{LittleEndian, 60, 4, 7},
		{LittleEndian, 63, 2, 8},
		{BigEndian, 7, 8, 0}, // whole byte 0
		{BigEndian, 7, 9, 1}, // on to bit 15
		{BigEndian, 0, 2, 1}, // bit 0, then bit 15
		{BigEndian, 39, 32, 7},
		{BigEndian, 56, 1, 7}, // LSB of byte 7
		{BigEndian, 56, 2, 8},
		{BigEndian, 511, 8, 63},
	}
	for _, tt := range tests {
		if got := lastByte(tt.order, tt.start, tt.length); got != tt.want {
			t.Errorf("lastByte(%v, %d, %d): got %d, want %d", tt.order, tt.start, tt.length, got, tt.want)
		}
	}
}
