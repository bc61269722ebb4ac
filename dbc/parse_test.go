package dbc_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/yukart/candec/dbc"
)

// load parses and compiles one DBC text named t.dbc.
func load(src string) (*dbc.Database, error) {
	f, err := dbc.Parse("t.dbc", []byte(src))
	if err != nil {
		return nil, err
	}
	return dbc.Compile(f)
}

const msg1 = "BO_ 1 M: 8 X\n"

func TestErrors(t *testing.T) {
	tests := []struct {
		name string
		src  string
		want string
		kind error
	}{
		{"byte order", msg1 + ` SG_ S : 0|8@2+ (1,0) [0|0] "" X`,
			`t.dbc:2:14: expected byte order 0 (Motorola) or 1 (Intel), found "2"`, dbc.ErrSyntax},
		{"sign", msg1 + ` SG_ S : 0|8@1 (1,0) [0|0] "" X`,
			`t.dbc:2:16: expected sign + or - after the byte order, found "("`, dbc.ErrSyntax},
		{"unterminated string", "CM_ \"abc;\nBO_ 1 M: 8 X\n",
			`t.dbc:1:5: string has no closing quote`, dbc.ErrSyntax},
		{"unterminated string in a message", msg1 + ` SG_ S : 0|8@1+ (1,0) [0|0] "unit X`,
			`t.dbc:2:29: string has no closing quote`, dbc.ErrSyntax},
		{"missing colon", "BO_ 1 M 8 X\n",
			`t.dbc:1:9: expected ":" after the message name, found "8"`, dbc.ErrSyntax},
		{"ID too large", "BO_ 4294967296 M: 8 X\n",
			`t.dbc:1:5: message ID "4294967296" is too large (at most 4294967295)`, dbc.ErrSyntax},
		{"fractional length", "BO_ 1 M: 8.5 X\n",
			`t.dbc:1:10: expected message length (an unsigned integer), found "8.5"`, dbc.ErrSyntax},
		{"negative length", "BO_ 1 M: -8 X\n",
			`t.dbc:1:10: expected message length, found "-"`, dbc.ErrSyntax},
		{"bad mux indicator", msg1 + ` SG_ S x1 : 0|8@1+ (1,0) [0|0] "" X`,
			`t.dbc:2:8: invalid multiplexer indicator "x1" (want M, m<value> or m<value>M)`, dbc.ErrSyntax},
		{"missing factor", msg1 + ` SG_ S : 0|8@1+ (,0) [0|0] "" X`,
			`t.dbc:2:18: expected the factor (a number), found ","`, dbc.ErrSyntax},
		{"VAL_ without label", msg1 + " SG_ S : 0|8@1+ (1,0) [0|0] \"\" X\nVAL_ 1 S 1 2;",
			`t.dbc:3:12: expected the label of value 1 (a quoted string), found "2"`, dbc.ErrSyntax},
		{"SG_MUL_VAL_ range", msg1 + " SG_ S : 0|8@1+ (1,0) [0|0] \"\" X\nSG_MUL_VAL_ 1 S Q 1 2;",
			`t.dbc:3:21: expected "-" in the range (lo-hi), found "2"`, dbc.ErrSyntax},
		{"message too long", "BO_ 1 M: 65 X\n",
			`t.dbc:1:1: message M: length 65 bytes is more than 64`, dbc.ErrInvalid},
		{"signal length 0", msg1 + ` SG_ S : 0|0@1+ (1,0) [0|0] "" X`,
			`t.dbc:2:2: signal M.S: length 0 is not 1–64 bits`, dbc.ErrInvalid},
		{"signal length 65", msg1 + ` SG_ S : 0|65@1+ (1,0) [0|0] "" X`,
			`t.dbc:2:2: signal M.S: length 65 is not 1–64 bits`, dbc.ErrInvalid},
		{"beyond any frame, Intel", msg1 + ` SG_ S : 508|8@1+ (1,0) [0|0] "" X`,
			`t.dbc:2:2: signal M.S: bits 508|8@1 reach byte 64, beyond the 64 bytes of any CAN frame`, dbc.ErrInvalid},
		{"beyond any frame, Motorola", msg1 + ` SG_ S : 504|9@0+ (1,0) [0|0] "" X`,
			`t.dbc:2:2: signal M.S: bits 504|9@0 reach byte 64, beyond the 64 bytes of any CAN frame`, dbc.ErrInvalid},
		{"duplicate ID", "BO_ 1 A: 8 X\nBO_ 1 B: 8 X\n",
			`t.dbc:2:1: message B: ID 001 is already used by message A at line 1`, dbc.ErrInvalid},
		{"float32 length", msg1 + " SG_ S : 0|16@1+ (1,0) [0|0] \"\" X\nSIG_VALTYPE_ 1 S : 1;",
			`t.dbc:3:1: signal S: value type 1 (IEEE float32) needs 32 bits, the signal has 16`, dbc.ErrInvalid},
		{"float64 length", msg1 + " SG_ S : 0|32@1+ (1,0) [0|0] \"\" X\nSIG_VALTYPE_ 1 S : 2;",
			`t.dbc:3:1: signal S: value type 2 (IEEE float64) needs 64 bits, the signal has 32`, dbc.ErrInvalid},
		{"multiplexed without switch", msg1 + ` SG_ S m3 : 0|8@1+ (1,0) [0|0] "" X`,
			`t.dbc:2:2: signal S is multiplexed (m3) but message M has no multiplexer switch (M) and no SG_MUL_VAL_ names one`, dbc.ErrInvalid},
		{"two switches", msg1 + " SG_ A M : 0|4@1+ (1,0) [0|0] \"\" X\n SG_ B M : 4|4@1+ (1,0) [0|0] \"\" X\n SG_ S m1 : 8|8@1+ (1,0) [0|0] \"\" X",
			`t.dbc:4:2: signal S is multiplexed (m1) but message M has 2 multiplexer switches (A, B) and no SG_MUL_VAL_ says which`, dbc.ErrInvalid},
		{"unknown switch", msg1 + " SG_ S m1 : 0|8@1+ (1,0) [0|0] \"\" X\nSG_MUL_VAL_ 1 S Q 1-1;",
			`t.dbc:3:1: signal S: multiplexer switch Q is not a signal of message M`, dbc.ErrInvalid},
		{"own switch", msg1 + " SG_ S m1M : 0|8@1+ (1,0) [0|0] \"\" X\nSG_MUL_VAL_ 1 S S 1-1;",
			`t.dbc:3:1: signal S cannot be its own multiplexer switch`, dbc.ErrInvalid},
		{"empty range", msg1 + " SG_ A M : 0|8@1+ (1,0) [0|0] \"\" X\n SG_ S m1 : 8|8@1+ (1,0) [0|0] \"\" X\nSG_MUL_VAL_ 1 S A 5-3;",
			`t.dbc:4:1: signal S: multiplexer range 5-3 is empty (start after end)`, dbc.ErrInvalid},
		{"two switches for one signal", msg1 + " SG_ A M : 0|4@1+ (1,0) [0|0] \"\" X\n SG_ B M : 4|4@1+ (1,0) [0|0] \"\" X\n SG_ S m1 : 8|8@1+ (1,0) [0|0] \"\" X\n" +
			"SG_MUL_VAL_ 1 S A 1-1;\nSG_MUL_VAL_ 1 S B 1-1;",
			`t.dbc:6:1: signal S: SG_MUL_VAL_ names switch B, but line 5 names A`, dbc.ErrInvalid},
		{"switch cycle", msg1 + " SG_ A m1M : 0|4@1+ (1,0) [0|0] \"\" X\n SG_ B m1M : 4|4@1+ (1,0) [0|0] \"\" X\n" +
			"SG_MUL_VAL_ 1 A B 1-1;\nSG_MUL_VAL_ 1 B A 1-1;",
			`t.dbc:2:2: message M: multiplexer switches form a cycle through signal A`, dbc.ErrInvalid},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := load(tt.src)
			if err == nil {
				t.Fatalf("got no error, want %q", tt.want)
			}
			if err.Error() != tt.want {
				t.Errorf("got error %q\n       want %q", err, tt.want)
			}
			var e *dbc.Error
			if !errors.As(err, &e) {
				t.Fatalf("got %T, want *dbc.Error", err)
			}
			if !errors.Is(err, tt.kind) {
				t.Errorf("got kind %v, want %v", e.Kind, tt.kind)
			}
		})
	}
}

func TestTolerated(t *testing.T) {
	sig := func(s string) string { return " SG_ " + s + " (1,0) [0|0] \"\" X\n" }
	tests := []struct {
		name string
		src  string
		// want are the warnings, each "line:col: text".
		want []string
		// check looks at what was compiled despite the quirk.
		check func(t *testing.T, db *dbc.Database)
	}{
		{"unknown keyword", "FOO_ 1 2 \"a;b\";\n" + msg1,
			[]string{`1:1: unknown keyword "FOO_": statement skipped`},
			func(t *testing.T, db *dbc.Database) { wantMessages(t, db, 1) }},
		{"unknown keyword without semicolon", "FOO_ 1 2\n" + msg1,
			[]string{`1:1: unknown keyword "FOO_": statement skipped`},
			func(t *testing.T, db *dbc.Database) { wantMessages(t, db, 1) }},
		{"byte order mark", "\uFEFF" + msg1, nil,
			func(t *testing.T, db *dbc.Database) { wantMessages(t, db, 1) }},
		{"NS_ list without indentation", "NS_ :\nCM_\nSG_MUL_VAL_\nSIG_VALTYPE_\n\nBS_:\nBU_: X\n" + msg1, nil,
			func(t *testing.T, db *dbc.Database) { wantMessages(t, db, 1) }},
		{"stray token", "; 12\n" + msg1,
			[]string{`1:1: unexpected ";" where a statement should start: skipped`,
				`1:3: unexpected "12" where a statement should start: skipped`},
			func(t *testing.T, db *dbc.Database) { wantMessages(t, db, 1) }},
		{"missing semicolon", msg1 + "CM_ BO_ 1 \"first\"\nCM_ SG_ 1 X \"x\";",
			[]string{`2:1: CM_ statement has no closing ";"`,
				`3:1: CM_ refers to signal X, which message M does not have: ignored`},
			func(t *testing.T, db *dbc.Database) {
				if c := db.Messages[0].Comment; c != "first" {
					t.Errorf("comment: got %q, want %q", c, "first")
				}
			}},
		{"SG_ outside a message", "VERSION \"\"\n" + sig("S : 0|8@1+"),
			[]string{`2:2: SG_ outside a message (no BO_ before it): skipped`}, nil},
		{"malformed attribute", msg1 + "BA_ \"GenMsgCycleTime\" BO_ 1 ;\nBA_DEF_ BO_ \"X\" BOOL;",
			[]string{`2:29: expected the attribute value (a number), found ";": BA_ statement skipped`,
				`3:17: unknown attribute type "BOOL" (want INT, HEX, FLOAT, STRING or ENUM): BA_DEF_ statement skipped`},
			func(t *testing.T, db *dbc.Database) { wantMessages(t, db, 1) }},
		{"non-integer value description", msg1 + sig("S : 0|8@1+") + "VAL_ 1 S -1.5 \"half\" 2 \"two\";",
			[]string{`3:10: value "-1.5" is not an integer: description "half" dropped`},
			func(t *testing.T, db *dbc.Database) {
				wantValues(t, db.Messages[0].Signals[0], []dbc.ValueDescription{{Value: 2, Label: "two"}})
			}},
		{"value described twice", msg1 + sig("S : 0|8@1+") + "VAL_ 1 S 1 \"a\" 1 \"b\" 0 \"z\";",
			[]string{`3:1: signal S: value 1 is described twice: "b" replaces "a"`},
			func(t *testing.T, db *dbc.Database) {
				wantValues(t, db.Messages[0].Signals[0], []dbc.ValueDescription{{Value: 0, Label: "z"}, {Value: 1, Label: "b"}})
			}},
		{"independent signals", "BO_ 3221225472 VECTOR__INDEPENDENT_SIG_MSG: 0 Vector__XXX\n" + sig("S : 0|8@1+") +
			"CM_ SG_ 3221225472 S \"x\";",
			[]string{`1:1: pseudo-message VECTOR__INDEPENDENT_SIG_MSG (signals not sent in any frame) skipped`},
			func(t *testing.T, db *dbc.Database) { wantMessages(t, db, 0) }},
		{"ID with more than 29 bits", "BO_ 4294967295 M: 8 X\n" + sig("S : 0|8@1+") + "VAL_ 4294967295 S 1 \"a\";",
			[]string{`1:1: message M: ID 4294967295 (0xFFFFFFFF) is no CAN ID (more than 29 bits): message skipped`},
			func(t *testing.T, db *dbc.Database) { wantMessages(t, db, 0) }},
		{"standard ID with more than 11 bits", "BO_ 272629760 M: 8 X\n",
			[]string{`1:1: message M: ID 272629760 (0x10400000) has more than 11 bits but no extended flag (bit 31): taken as a 29-bit ID`},
			func(t *testing.T, db *dbc.Database) {
				if db.Message(0x10400000, true) == nil {
					t.Error("message not found as extended 0x10400000")
				}
			}},
		{"signal beyond the message length", "BO_ 1 M: 2 X\n" + sig("S : 8|16@1+") + sig("T : 23|9@0+"),
			[]string{`2:2: signal M.S: bits 8|16@1 reach byte 2, beyond the message length of 2 bytes (frames that short flag it truncated)`,
				`3:2: signal M.T: bits 23|9@0 reach byte 3, beyond the message length of 2 bytes (frames that short flag it truncated)`},
			func(t *testing.T, db *dbc.Database) { wantSignals(t, db.Messages[0], "S", "T") }},
		{"switch without M", msg1 + sig("A : 0|8@1+") + sig("S m1 : 8|8@1+") + "SG_MUL_VAL_ 1 S A 1-2;",
			[]string{`4:1: signal A is used as a multiplexer switch, but its SG_ line (line 2) does not say M: taken as a switch`},
			func(t *testing.T, db *dbc.Database) {
				s := db.Messages[0].Signals
				if !s[0].Multiplexer || s[1].Mux == nil || s[1].Mux.Switch != s[0] {
					t.Errorf("got multiplexer %v, mux %+v; want A a switch selecting S", s[0].Multiplexer, s[1].Mux)
				}
			}},
		{"multiplexed only by SG_MUL_VAL_", msg1 + sig("A M : 0|8@1+") + sig("S : 8|8@1+") + "SG_MUL_VAL_ 1 S A 1-2;",
			[]string{`4:1: signal S is multiplexed by SG_MUL_VAL_, but its SG_ line (line 3) has no m<value>: taken as multiplexed`},
			func(t *testing.T, db *dbc.Database) {
				if mux := db.Messages[0].Signals[1].Mux; mux == nil || mux.Ranges[0] != (dbc.MuxRange{Lo: 1, Hi: 2}) {
					t.Errorf("got mux %+v, want A in 1-2", mux)
				}
			}},
		{"references to unknown things", msg1 + sig("S : 0|8@1+") + "CM_ BO_ 2 \"x\";\nVAL_ 1 T 1 \"a\";\nSIG_VALTYPE_ 9 S : 1;\nSIG_VALTYPE_ 1 S : 7;",
			[]string{`3:1: CM_ refers to message ID 2, which the file does not define: ignored`,
				`4:1: VAL_ refers to signal T, which message M does not have: ignored`,
				`5:1: SIG_VALTYPE_ refers to message ID 9, which the file does not define: ignored`,
				`6:1: signal S: unknown value type 7 (want 0, 1 or 2): ignored`}, nil},
		{"enum index out of range", msg1 + "BA_DEF_ BO_ \"GenMsgSendType\" ENUM \"Cyclic\";\nBA_ \"GenMsgSendType\" BO_ 1 4;",
			[]string{`3:1: GenMsgSendType 4 is not an index of its ENUM (1 values): ignored`},
			func(t *testing.T, db *dbc.Database) {
				if st := db.Messages[0].SendType; st != "" {
					t.Errorf("send type: got %q, want none", st)
				}
			}},
		{"not UTF-8", msg1 + " SG_ S : 0|8@1+ (1,0) [0|0] \"\xb0C\" X\n",
			[]string{`2:30: text is not UTF-8: read as Windows-1252`},
			func(t *testing.T, db *dbc.Database) {
				if u := db.Messages[0].Signals[0].Unit; u != "°C" {
					t.Errorf("unit: got %q, want °C", u)
				}
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			db, err := load(tt.src)
			if err != nil {
				t.Fatalf("got error %v, want none", err)
			}
			var got []string
			for _, w := range db.Warnings {
				got = append(got, strings.TrimPrefix(w.String(), "t.dbc:"))
			}
			if strings.Join(got, "\n") != strings.Join(tt.want, "\n") {
				t.Errorf("got warnings\n  %s\nwant\n  %s", strings.Join(got, "\n  "), strings.Join(tt.want, "\n  "))
			}
			if tt.check != nil {
				tt.check(t, db)
			}
		})
	}
}

func wantMessages(t *testing.T, db *dbc.Database, n int) {
	t.Helper()
	if len(db.Messages) != n {
		t.Errorf("got %d messages, want %d", len(db.Messages), n)
	}
}

func wantSignals(t *testing.T, m *dbc.Message, names ...string) {
	t.Helper()
	var got []string
	for _, s := range m.Signals {
		got = append(got, s.Name)
	}
	if strings.Join(got, " ") != strings.Join(names, " ") {
		t.Errorf("%s: got signals %v, want %v", m.Name, got, names)
	}
}

func wantValues(t *testing.T, s *dbc.Signal, want []dbc.ValueDescription) {
	t.Helper()
	if len(s.Values) != len(want) {
		t.Fatalf("%s: got values %v, want %v", s.Name, s.Values, want)
	}
	for i := range want {
		if s.Values[i] != want[i] {
			t.Errorf("%s: got values %v, want %v", s.Name, s.Values, want)
		}
	}
}

// TestLongTokensCut: an error or a warning quotes at most 80 characters
// of a token, Go-quoted, however long the token and whatever it holds.
func TestLongTokensCut(t *testing.T) {
	big := strings.Repeat("\x1b[2J", 1<<20) // 4 MB of terminal escapes
	digits := strings.Repeat("9", 1<<20)
	for _, tt := range []struct{ name, src string }{
		{"unknown keyword", "X" + strings.Repeat("K", 1<<20) + " 1;\n" + msg1},
		{"number too large", "BO_ " + digits + " M: 8 X\n"},
		{"float out of range", msg1 + " SG_ S : 0|8@1+ (1" + digits + "e9,0) [0|0] \"\" X\n"},
		{"string where a name goes", "BO_ 1 \"" + big + "\": 8 X\n"},
		{"multiplexer indicator", msg1 + " SG_ S m" + strings.Repeat("x", 1<<20) + " : 0|8@1+ (1,0) [0|0] \"\" X\n"},
		{"attribute type", `BA_DEF_ BO_ "A" ` + strings.Repeat("T", 1<<20) + " ;\n" + msg1},
		{"value description", msg1 + " SG_ S : 0|8@1+ (1,0) [0|0] \"\" X\nVAL_ 1 S -1.5 \"" + big + "\";\n"},
	} {
		f, err := dbc.Parse("t.dbc", []byte(tt.src))
		var texts []string
		if err != nil {
			texts = append(texts, err.Error())
		} else {
			for _, w := range f.Warnings {
				texts = append(texts, w.String())
			}
		}
		if len(texts) == 0 {
			t.Errorf("%s: no error and no warning", tt.name)
		}
		for _, s := range texts {
			if len(s) > 300 || strings.Contains(s, "\x1b") {
				t.Errorf("%s: got a message of %d bytes, want at most 300 and no ESC: %.200q", tt.name, len(s), s)
			}
		}
	}
}

// TestLongNamesCut: a name an error or a warning names is cut to 80
// characters, however long.
func TestLongNamesCut(t *testing.T) {
	name := strings.Repeat("S", 10<<20)
	for _, tt := range []struct{ name, src string }{
		{"signal", "BO_ 1 M: 1 X\n SG_ " + name + " : 0|16@1+ (1,0) [0|0] \"\" X\n"},
		{"message", "BO_ 1 " + name + ": 1 X\n SG_ A : 0|16@1+ (1,0) [0|0] \"\" X\n"},
		{"comment", msg1 + " SG_ A : 0|16@1+ (1,0) [0|0] \"\" X\nCM_ SG_ 1 " + name + " \"x\";\n"},
		{"conflict", "BO_ 1 M: 8 X\n SG_ " + name + " : 0|8@1+ (1,0) [0|0] \"\" X\n SG_ " + name + " : 8|8@1+ (1,0) [0|0] \"\" X\n"},
	} {
		db, err := load(tt.src)
		var texts []string
		if err != nil {
			texts = append(texts, err.Error())
		} else {
			for _, w := range db.Warnings {
				texts = append(texts, w.String())
			}
		}
		if len(texts) == 0 {
			t.Errorf("%s: no error and no warning", tt.name)
		}
		for _, s := range texts {
			if len(s) > 500 {
				t.Errorf("%s: got a message of %d bytes, want at most 500: %.200q", tt.name, len(s), s)
			}
		}
	}
}
