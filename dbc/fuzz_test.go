package dbc_test

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/yukart/candec/dbc"
)

// FuzzParse feeds arbitrary text to the parser and compiler. Neither may
// panic or hang; an error must be a positioned *dbc.Error; a compiled
// database must keep the promises the decoder relies on.
func FuzzParse(f *testing.F) {
	seeds, err := filepath.Glob("testdata/*.dbc")
	if err != nil {
		f.Fatal(err)
	}
	for _, path := range seeds {
		src, err := os.ReadFile(path)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(src)
	}
	for _, s := range []string{
		"",
		"BO_ 1 M: 8 X\n SG_ A M : 0|8@1+ (1,0) [0|0] \"\" X\n SG_ B m1M : 8|8@0- (1,0) [0|0] \"\" X\n SG_ C m2 : 23|8@0+ (1,0) [0|0] \"\" X\nSG_MUL_VAL_ 1 C B 2-3;\nSG_MUL_VAL_ 1 B A 1-1;\n",
		"VAL_ 1 S -1 \"a\" 18446744073709551615 \"b\";\nCM_ \"unterminated",
		"BA_DEF_ BO_ \"GenMsgSendType\" ENUM \"A\",\"B\";\nBA_ \"GenMsgSendType\" BO_ 1 1;\nBO_ 1 M: 8 X\n",
		"BO_ 1 M: 8 X\n SG_ S m : 0|8@1+ (1,0) [0|0] \"\" X\n SG_ S mM : 8|8@1+ (1,0) [0|0] \"\" X\n SG_ S_2 : 16|8@1+ (1,0) [0|0] \"\" X\nSG_MUL_VAL_ 1 S S 1-1;\n",
		"BA_DEF_ BO_ \"VFrameFormat\" ENUM \"StandardCAN\",\"ExtendedCAN\",\"reserved\",\"J1939PG\";\nBA_ \"ProtocolType\" \"J1939\";\nBO_ 2364540158 A: 8 X\nBO_ 2364539904 B: 8 X\nBA_ \"VFrameFormat\" BO_ 2364539904 3;\n",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, src []byte) {
		file, err := dbc.Parse("f.dbc", src)
		if err != nil {
			checkError(t, err)
			return
		}
		db, err := dbc.Compile(file)
		if err != nil {
			checkError(t, err)
			return
		}
		for _, m := range db.Messages {
			if m.Length < 0 || m.Length > dbc.MaxLength {
				t.Errorf("%s: length %d", m.Name, m.Length)
			}
			placed := map[*dbc.Signal]bool{}
			names := map[string]bool{}
			for _, s := range m.Signals {
				if names[s.Name] {
					t.Errorf("%s: two signals named %s", m.Name, s.Name)
				}
				names[s.Name] = true
				if s.Length < 1 || s.Length > 64 {
					t.Errorf("%s: length %d", s.Name, s.Length)
				}
				if s.Type == dbc.Float32 && s.Length != 32 || s.Type == dbc.Float64 && s.Length != 64 {
					t.Errorf("%s: %v of %d bits", s.Name, s.Type, s.Length)
				}
				if s.Mux != nil && !placed[s.Mux.Switch] {
					t.Errorf("%s: comes before its switch %s", s.Name, s.Mux.Switch.Name)
				}
				placed[s] = true
			}
			if m.J1939 && (!m.Extended || db.MessageByPGN(m.PGN()) == nil) {
				t.Errorf("%s: J1939, extended %v, not found by its PGN", m.Name, m.Extended)
			}
		}
		if err := db.Describe(io.Discard); err != nil {
			t.Error(err)
		}
	})
}

func checkError(t *testing.T, err error) {
	t.Helper()
	var e *dbc.Error
	if !errors.As(err, &e) {
		t.Fatalf("got %T %v, want *dbc.Error", err, err)
	}
	if e.Line < 1 || e.Column < 1 || e.File != "f.dbc" || e.Msg == "" || e.Kind == nil {
		t.Errorf("error without a position or reason: %#v", e)
	}
}
