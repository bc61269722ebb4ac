package dbc_test

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/yukart/candec/dbc"
	"github.com/yukart/candec/internal/testkit/realdata"
)

// realFiles lists every real DBC file with the messages and signals
// candec must compile from it (counted from the BO_ and SG_ lines) and
// the warnings it gives: cp1252 text, and issue_199's IDs.
var realFiles = []struct {
	name              string
	messages, signals int
	warnings          int
}{
	{"Model3CAN.dbc", 159, 2752, 0},
	{"cango_example.dbc", 8, 24, 0},
	{"cantools_abs.dbc", 18, 89, 1},
	{"cantools_big_numbers.dbc", 2, 2, 0},
	{"cantools_choices.dbc", 1, 1, 1},
	{"cantools_cp1252.dbc", 0, 0, 1},
	{"cantools_emc32.dbc", 1, 5, 0},
	{"cantools_fd_test.dbc", 4, 4, 0},
	{"cantools_floating_point.dbc", 2, 3, 0},
	{"cantools_issue_184_extended_mux_cascaded.dbc", 1, 5, 0},
	{"cantools_issue_184_extended_mux_multiple_values.dbc", 1, 4, 0},
	// cantools refuses this file ("Extended frame id 0x7fffffff is more
	// than 29 bits"). candec skips that message (ID 0xFFFFFFFF) and
	// takes the ten IDs above 11 bits written without bit 31 as
	// extended, each with a warning.
	{"cantools_issue_199_extended.dbc", 10, 24, 11},
	{"cantools_j1939.dbc", 2, 2, 0},
	{"cantools_long_names.dbc", 10, 13, 0},
	{"cantools_motohawk.dbc", 1, 3, 0},
	{"cantools_msxii_system_can.dbc", 1, 73, 0},
	{"cantools_multiplex_2.dbc", 4, 19, 0},
	{"cantools_open_actuator.dbc", 5, 21, 0},
	{"cantools_padding_bit_order.dbc", 5, 13, 0},
	{"cantools_signed.dbc", 11, 18, 0},
	{"cantools_variable_dlc.dbc", 2, 8, 0},
	{"cantools_vehicle.dbc", 217, 462, 1},
	{"fleetwise_can_fd.dbc", 18, 78, 0},
	{"fleetwise_sample.dbc", 15, 42, 0},
	{"odrive-cansimple.dbc", 216, 328, 0},
	{"toyota_adas.dbc", 33, 179, 0},
	{"toyota_new_mc_pt_generated.dbc", 58, 353, 0},
}

func realDBC(t testing.TB, name string) string {
	return filepath.Join(realdata.Dir(t), "dbc", name)
}

func TestRealFiles(t *testing.T) {
	paths, err := filepath.Glob(realDBC(t, "*.dbc"))
	if err != nil {
		t.Fatal(err)
	}
	if len(paths) != len(realFiles) {
		t.Errorf("found %d real DBC files, the table has %d", len(paths), len(realFiles))
	}
	for _, rf := range realFiles {
		t.Run(rf.name, func(t *testing.T) {
			db, err := dbc.Load(realDBC(t, rf.name))
			if rf.messages == 0 {
				// A file of nodes and comments only decodes nothing:
				// Load refuses it rather than start a silent decoder.
				if !errors.Is(err, dbc.ErrNoMessages) {
					t.Fatalf("got %v, want ErrNoMessages", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(db.Messages) != rf.messages || len(db.Signals) != rf.signals {
				t.Errorf("got %d messages, %d signals; want %d, %d", len(db.Messages), len(db.Signals), rf.messages, rf.signals)
			}
			if len(db.Warnings) != rf.warnings {
				t.Errorf("got %d warnings, want %d: %v", len(db.Warnings), rf.warnings, db.Warnings)
			}
		})
	}
}

func TestRealExtendedMultiplexing(t *testing.T) {
	db, err := dbc.Load(realDBC(t, "cantools_issue_184_extended_mux_cascaded.dbc"))
	if err != nil {
		t.Fatal(err)
	}
	// The file lists the signals leaves first, switches last.
	wantTree(t, db.Message(1, true),
		"MUX_A M",
		"muxed_A_2_MUX_B MUX_A=2 M",
		"muxed_B_1 muxed_A_2_MUX_B=1",
		"muxed_B_0 muxed_A_2_MUX_B=0",
		"muxed_A_1 MUX_A=1")

	db, err = dbc.Load(realDBC(t, "cantools_issue_184_extended_mux_multiple_values.dbc"))
	if err != nil {
		t.Fatal(err)
	}
	wantTree(t, db.Message(1, true), "MUX M", "muxed_2 MUX=2", "muxed_1 MUX=1", "muxed_0_3_4_5 MUX=0,3-5")

	db, err = dbc.Load(realDBC(t, "cantools_multiplex_2.dbc"))
	if err != nil {
		t.Fatal(err)
	}
	// SG_MUL_VAL_ overrides the SG_ line: Shared's S2 is "m2" but
	// selected by 2-5.
	wantTree(t, db.Message(0xC02FEFE, true), "S0 M", "S2 S0=2-5", "S1 S0=1,3")
	wantTree(t, db.Message(0xC01FEFE, true), "S0 M", "S2 S0=1", "S1 S0=0")
	// Two independent switches, S6 and S0, and S1 cascaded under S0.
	wantTree(t, db.Message(0xC00FEFE, true),
		"S6 M", "S8 S6=2", "S7 S6=1", "S0 M", "S5 S0=1", "S1 S0=0 M", "S4 S1=2", "S3 S1=0", "S2 S1=0")
	wantTree(t, db.Message(0xC03FEFE, true), "S11 M", "S9 S11=5", "S0 S11=3 M", "S10 S0=0")
	types := db.Message(0xC03FEFE, true)
	if s := types.Signals[1]; s.Name != "S9" || s.Type != dbc.Float32 || s.Min != -1.34 || s.Max != 1235 {
		t.Errorf("S9: got %s %v [%v|%v], want float32 [-1.34|1235]", s.Name, s.Type, s.Min, s.Max)
	}

	db, err = dbc.Load(realDBC(t, "Model3CAN.dbc"))
	if err != nil {
		t.Fatal(err)
	}
	// The file's 1,349 multiplexed signals are 29 switches and 1,320
	// signals they select.
	switches, selected := 0, 0
	for _, s := range db.Signals {
		if s.Multiplexer {
			switches++
		}
		if s.Mux != nil {
			selected++
		}
	}
	if switches != 29 || selected != 1320 {
		t.Errorf("Model3CAN: got %d switches, %d multiplexed; want 29, 1320", switches, selected)
	}
}

func TestRealSignals(t *testing.T) {
	db, err := dbc.Load(realDBC(t, "toyota_new_mc_pt_generated.dbc"))
	if err != nil {
		t.Fatal(err)
	}
	// BO_ 608 STEER_TORQUE_SENSOR: 8 XXX
	//  SG_ STEER_TORQUE_DRIVER : 15|16@0- (1,0) [-32768|32767] "" XXX
	//  SG_ STEER_ANGLE : 31|16@0- (0.0573,0) [-500|500] "" XXX
	m := db.Message(608, false)
	if m == nil || m.Name != "STEER_TORQUE_SENSOR" || m.Length != 8 || m.Sender != "XXX" || len(m.Signals) != 6 {
		t.Fatalf("got %+v", m)
	}
	d, a := m.Signals[1], m.Signals[2]
	if d.Name != "STEER_TORQUE_DRIVER" || d.Start != 15 || d.Length != 16 || d.Order != dbc.BigEndian || !d.Signed ||
		d.Min != -32768 || d.Max != 32767 || d.Comment != "driver torque" {
		t.Errorf("got %+v", d)
	}
	if a.Name != "STEER_ANGLE" || a.Start != 31 || a.Factor != 0.0573 || a.Min != -500 {
		t.Errorf("got %+v", a)
	}

	db, err = dbc.Load(realDBC(t, "cantools_choices.dbc"))
	if err != nil {
		t.Fatal(err)
	}
	foo := db.Messages[0].Signals[0]
	if l, ok := foo.Label(-5); !ok || l != "A negative value" {
		t.Errorf("Foo.Label(-5): got %q, %v", l, ok)
	}
	if l, _ := foo.Label(1); l != "#%=*ä'" {
		t.Errorf("Foo.Label(1): got %q, want the cp1252 text decoded", l)
	}

	db, err = dbc.Load(realDBC(t, "cantools_floating_point.dbc"))
	if err != nil {
		t.Fatal(err)
	}
	if s := db.Message(1024, false).Signals[0]; s.Type != dbc.Float64 {
		t.Errorf("Message1.Signal1: got %v, want float64", s.Type)
	}
}

// BenchmarkLoadModel3 measures loading the largest real file (322 KB).
func BenchmarkLoadModel3(b *testing.B) {
	src, err := os.ReadFile(realDBC(b, "Model3CAN.dbc"))
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(src)))
	b.ReportAllocs()
	for b.Loop() {
		f, err := dbc.Parse("Model3CAN.dbc", src)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := dbc.Compile(f); err != nil {
			b.Fatal(err)
		}
	}
}
