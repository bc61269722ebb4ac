package dbc_test

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/yukart/candec/dbc"
	"github.com/yukart/candec/internal/testkit/realdata"
)

func TestPGN(t *testing.T) {
	tests := []struct {
		name string
		id   uint32
		want uint32
	}{
		{"PDU2: PS is part of it", 0x18FEF1FE, 0xFEF1},
		{"PDU2, priority and SA ignored", 0x0CFEF100, 0xFEF1},
		{"PF 240 (EEC1) is PDU2", 0x0CF004FE, 0xF004},
		{"PDU1 below 240", 0x18EA00F9, 0xEA00},
		{"PDU1, another destination", 0x18EAFFF9, 0xEA00},
		{"data page", 0x15340201, 0x13400},
		{"extended data page and data page", 0x1334AB01, 0x33400},
		{"PF 240, the first PDU2", 0x15F01002, 0x1F010},
	}
	for _, tt := range tests {
		if got := dbc.PGN(tt.id); got != tt.want {
			t.Errorf("%s: PGN(%08X): got %05X, want %05X", tt.name, tt.id, got, tt.want)
		}
	}
}

func TestJ1939Messages(t *testing.T) {
	const defs = "BA_DEF_ \"ProtocolType\" STRING ;\n" +
		"BA_DEF_ BO_ \"VFrameFormat\" ENUM \"StandardCAN\",\"ExtendedCAN\",\"reserved\",\"J1939PG\";\n"
	tests := []struct {
		name  string
		src   string
		j1939 []bool // per message
		warns []string
	}{
		{"no attributes", "BO_ 2364540158 EEC1: 8 X\n", []bool{false}, nil},
		{"ProtocolType J1939 makes every 29-bit message J1939",
			defs + "BA_ \"ProtocolType\" \"J1939\";\nBO_ 2364540158 EEC1: 8 X\nBO_ 100 STD: 8 X\n",
			[]bool{true, false}, nil},
		{"ProtocolType by default", defs + "BA_DEF_DEF_ \"ProtocolType\" \"J1939\";\nBO_ 2364540158 EEC1: 8 X\n",
			[]bool{true}, nil},
		{"ProtocolType other", defs + "BA_ \"ProtocolType\" \"\";\nBO_ 2364540158 EEC1: 8 X\n", []bool{false}, nil},
		{"VFrameFormat J1939PG by index", defs + "BO_ 2364540158 EEC1: 8 X\nBO_ 2566844926 CCVS1: 8 X\nBA_ \"VFrameFormat\" BO_ 2364540158 3;\n",
			[]bool{true, false}, nil},
		{"VFrameFormat ExtendedCAN overrides ProtocolType",
			defs + "BA_ \"ProtocolType\" \"J1939\";\nBO_ 2364540158 EEC1: 8 X\nBA_ \"VFrameFormat\" BO_ 2364540158 1;\n",
			[]bool{false}, nil},
		{"VFrameFormat default J1939PG", defs + "BA_DEF_DEF_ \"VFrameFormat\" \"J1939PG\";\nBO_ 2364540158 EEC1: 8 X\n",
			[]bool{true}, nil},
		{"J1939PG on an 11-bit message", defs + "BO_ 100 STD: 8 X\nBA_ \"VFrameFormat\" BO_ 100 3;\n",
			[]bool{false}, []string{`3:1: message STD: VFrameFormat J1939PG, but ID 064 has 11 bits: matched by ID only`}},
		{"two messages of one PGN", defs + "BA_ \"ProtocolType\" \"J1939\";\nBO_ 2364540158 EEC1: 8 X\nBO_ 2364539904 EEC1b: 8 X\n",
			[]bool{true, true}, []string{`5:1: J1939 message EEC1b (ID 0CF00400) has the PGN 61444 (0x0F004) of message EEC1 in t.dbc:4: frames of that PGN with neither ID decode as EEC1`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			db, err := load(tt.src)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, w := range db.Warnings {
				got = append(got, strings.TrimPrefix(w.String(), "t.dbc:"))
			}
			if strings.Join(got, "\n") != strings.Join(tt.warns, "\n") {
				t.Errorf("got warnings\n  %s\nwant\n  %s", strings.Join(got, "\n  "), strings.Join(tt.warns, "\n  "))
			}
			for i, m := range db.Messages {
				if m.J1939 != tt.j1939[i] {
					t.Errorf("%s: got J1939 %v, want %v", m.Name, m.J1939, tt.j1939[i])
				}
				if got, want := db.MessageByPGN(m.PGN()) != nil, tt.j1939[i]; m.Extended && got != want {
					t.Errorf("%s: MessageByPGN(%05X) found %v, want %v", m.Name, m.PGN(), got, want)
				}
			}
			if len(db.Messages) == 2 && tt.j1939[0] && tt.j1939[1] && db.Messages[0].PGN() == db.Messages[1].PGN() {
				if got := db.MessageByPGN(db.Messages[0].PGN()); got != db.Messages[0] {
					t.Errorf("MessageByPGN: got %s, want the first, %s", got.Name, db.Messages[0].Name)
				}
			}
		})
	}
}

// TestRealJ1939Files loads the J1939 databases of the reference data:
// every message is a J1939 parameter group.
func TestRealJ1939Files(t *testing.T) {
	dir := realdata.Dir(t)
	for _, c := range []struct {
		path string
		pgns []uint32
	}{
		{filepath.Join("dbc", "cantools_j1939.dbc"), []uint32{0x13400, 0x1F010}},
		{filepath.Join("formats", "CSS-Electronics-SAE-J1939-DEMO.dbc"), []uint32{0xF004, 0xFEF1}},
	} {
		db, err := dbc.Load(filepath.Join(dir, c.path))
		if err != nil {
			t.Fatal(err)
		}
		if len(db.Messages) != len(c.pgns) {
			t.Fatalf("%s: got %d messages, want %d", c.path, len(db.Messages), len(c.pgns))
		}
		for i, m := range db.Messages {
			if !m.J1939 || m.PGN() != c.pgns[i] || db.MessageByPGN(c.pgns[i]) != m {
				t.Errorf("%s: %s: got J1939 %v PGN %05X, want J1939 PGN %05X found by PGN", c.path, m.Name, m.J1939, m.PGN(), c.pgns[i])
			}
		}
	}
}

func TestDescribeJ1939(t *testing.T) {
	db, err := load("BA_DEF_ \"ProtocolType\" STRING ;\nBA_ \"ProtocolType\" \"J1939\";\nBO_ 2364540158 EEC1: 8 X\nBO_ 100 STD: 8 X\n")
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	if err := db.Describe(&b); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"0CF004FE EEC1 len=8 cycle=- send=- sender=X j1939 pgn=0F004\n", "064 STD len=8 cycle=- send=- sender=X\n"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("got listing\n%s\nwant a line %q", b.String(), want)
		}
	}
}
