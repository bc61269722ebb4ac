package dbc_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/yukart/candec/dbc"
)

// muxTree lists a message's signals in order as "name", "name M",
// "name sw=1,3-5" or "name sw=1 M": its multiplexing at a glance.
func muxTree(m *dbc.Message) []string {
	var out []string
	for _, s := range m.Signals {
		line := s.Name
		if s.Mux != nil {
			var rs []string
			for _, r := range s.Mux.Ranges {
				if r.Lo == r.Hi {
					rs = append(rs, fmt.Sprint(r.Lo))
				} else {
					rs = append(rs, fmt.Sprintf("%d-%d", r.Lo, r.Hi))
				}
			}
			line += " " + s.Mux.Switch.Name + "=" + strings.Join(rs, ",")
		}
		if s.Multiplexer {
			line += " M"
		}
		out = append(out, line)
	}
	return out
}

func wantTree(t *testing.T, m *dbc.Message, want ...string) {
	t.Helper()
	if m == nil {
		t.Fatal("message missing")
	}
	got := muxTree(m)
	if strings.Join(got, "; ") != strings.Join(want, "; ") {
		t.Errorf("%s:\n got %s\nwant %s", m.Name, strings.Join(got, "; "), strings.Join(want, "; "))
	}
}

func TestQuirksFile(t *testing.T) {
	db, err := dbc.Load("testdata/quirks.dbc")
	if err != nil {
		t.Fatal(err)
	}
	var warnings []string
	for _, w := range db.Warnings {
		warnings = append(warnings, w.String())
	}
	wantWarnings := []string{
		`testdata/quirks.dbc:29:1: pseudo-message VECTOR__INDEPENDENT_SIG_MSG (signals not sent in any frame) skipped`,
		`testdata/quirks.dbc:41:1: CM_ statement has no closing ";"`,
		`testdata/quirks.dbc:55:1: unknown keyword "FOO_BAR_": statement skipped`,
	}
	if strings.Join(warnings, "\n") != strings.Join(wantWarnings, "\n") {
		t.Errorf("got warnings\n%s\nwant\n%s", strings.Join(warnings, "\n"), strings.Join(wantWarnings, "\n"))
	}

	drive := db.Message(0x100, false)
	wantTree(t, drive, "Mode M", "Speed Mode=0", "Torque Mode=1", "Gear")
	if drive.CycleTime != 20*time.Millisecond || drive.CycleTimeDefault {
		t.Errorf("Drive cycle: got %v (default %v), want 20ms set on the message", drive.CycleTime, drive.CycleTimeDefault)
	}
	if drive.SendType != "Cyclic" || drive.Sender != "ECU" || drive.Length != 8 {
		t.Errorf("Drive: got send type %q, sender %q, length %d; want Cyclic (the default), ECU, 8", drive.SendType, drive.Sender, drive.Length)
	}
	if want := "drive \"state\"\nsecond line"; drive.Comment != want {
		t.Errorf("Drive comment: got %q, want %q", drive.Comment, want)
	}
	speed, torque, gear := drive.Signals[1], drive.Signals[2], drive.Signals[3]
	if speed.Comment != "vehicle speed" || torque.Comment != "no semicolon" {
		t.Errorf("comments: got %q, %q", speed.Comment, torque.Comment)
	}
	if strings.Join(speed.Receivers, ",") != "Dash,Logger" {
		t.Errorf("Speed receivers: got %v, want [Dash Logger]", speed.Receivers)
	}
	if speed.Factor != 0.1 || speed.Unit != "km/h" || speed.Max != 250 {
		t.Errorf("Speed: got factor %v, unit %q, max %v", speed.Factor, speed.Unit, speed.Max)
	}
	if !torque.Signed || torque.Offset != -100 || torque.Min != -1000 {
		t.Errorf("Torque: got signed %v, offset %v, min %v", torque.Signed, torque.Offset, torque.Min)
	}
	wantValues(t, gear, []dbc.ValueDescription{{Value: -1, Label: "R"}, {Value: 0, Label: "N"}, {Value: 1, Label: "D"}})
	if l, ok := gear.Label(-1); !ok || l != "R" {
		t.Errorf("Gear.Label(-1): got %q, %v; want R", l, ok)
	}

	ext := db.Message(0x200, true)
	if db.Message(0x200, false) != nil {
		t.Error("extended 0x200 also found as a standard ID")
	}
	wantTree(t, ext, "Page M", "Sub Page=1 M", "Leaf Sub=2,4-6", "Temp Page=3")
	if ext.SendType != "Event" || ext.Sender != "Logger" {
		t.Errorf("Ext29: got send type %q (want Event: ENUM index 1), sender %q", ext.SendType, ext.Sender)
	}
	temp := ext.Signals[3]
	if temp.Type != dbc.Float32 || temp.Order != dbc.BigEndian || temp.Receivers != nil {
		t.Errorf("Temp: got type %v, order %v, receivers %v; want float32, big-endian, none", temp.Type, temp.Order, temp.Receivers)
	}
	if len(db.Signals) != 8 {
		t.Errorf("got %d signals, want 8", len(db.Signals))
	}
	for i, s := range db.Signals {
		if s.Index != i || s.Message == nil {
			t.Errorf("signal %s: index %d at %d, message %v", s.Name, s.Index, i, s.Message)
		}
	}
}

func TestCP1252File(t *testing.T) {
	db, err := dbc.Load("testdata/cp1252.dbc")
	if err != nil {
		t.Fatal(err)
	}
	if len(db.Warnings) != 1 || db.Warnings[0].String() != "testdata/cp1252.dbc:6:42: text is not UTF-8: read as Windows-1252" {
		t.Errorf("got warnings %v, want one at 6:42", db.Warnings)
	}
	m := db.Messages[0]
	if got := m.Signals[0].Unit + " " + m.Signals[1].Unit; got != "°C €" {
		t.Errorf("units: got %q, want %q", got, "°C €")
	}
	if want := "Wicklungstemperatur, gemessen am Ständer"; m.Signals[0].Comment != want {
		t.Errorf("comment: got %q, want %q", m.Signals[0].Comment, want)
	}
}

func TestCycleTimeAndSendType(t *testing.T) {
	src := `BA_DEF_ BO_ "GenMsgCycleTime" INT 0 10000;
BA_DEF_ BO_ "GenMsgSendType" ENUM "Cyclic","Event";
BA_DEF_DEF_ "GenMsgCycleTime" 50;
BA_DEF_DEF_ "GenMsgSendType" "Event";
BO_ 1 Default: 8 X
BO_ 2 Set: 8 X
BO_ 3 Zero: 8 X
BO_ 4 Fraction: 8 X
BA_ "GenMsgCycleTime" BO_ 2 100;
BA_ "GenMsgSendType" BO_ 2 0;
BA_ "GenMsgCycleTime" BO_ 3 0;
BA_ "GenMsgCycleTime" BO_ 4 2.5;
BA_ "GenMsgSendType" BO_ 4 "Spontan";
`
	db, err := load(src)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		id      uint32
		cycle   time.Duration
		dflt    bool
		sendTyp string
	}{
		{1, 50 * time.Millisecond, true, "Event"},
		{2, 100 * time.Millisecond, false, "Cyclic"},
		{3, 0, false, "Event"},
		{4, 2500 * time.Microsecond, false, "Spontan"},
	}
	for _, tt := range tests {
		m := db.Message(tt.id, false)
		if m.CycleTime != tt.cycle || m.CycleTimeDefault != tt.dflt || m.SendType != tt.sendTyp {
			t.Errorf("%s: got cycle %v default %v send %q, want %v %v %q", m.Name, m.CycleTime, m.CycleTimeDefault, m.SendType, tt.cycle, tt.dflt, tt.sendTyp)
		}
	}
}

func TestLongNames(t *testing.T) {
	src := `BU_: N1
BO_ 1 Short: 8 N1
 SG_ S1 : 0|8@1+ (1,0) [0|0] "" N1
 SG_ S2 : 8|8@1+ (1,0) [0|0] "" N1
CM_ SG_ 1 S1 "found by its short name";
BA_DEF_ BO_ "SystemMessageLongSymbol" STRING;
BA_DEF_ SG_ "SystemSignalLongSymbol" STRING;
BA_DEF_ BU_ "SystemNodeLongSymbol" STRING;
BA_ "SystemMessageLongSymbol" BO_ 1 "AMessageNameLongerThanThirtyTwoChars";
BA_ "SystemSignalLongSymbol" SG_ 1 S1 "ASignalNameLongerThanThirtyTwoChars";
BA_ "SystemNodeLongSymbol" BU_ N1 "ANodeNameLongerThanThirtyTwoCharacters";
`
	db, err := load(src)
	if err != nil {
		t.Fatal(err)
	}
	m := db.Messages[0]
	if m.Name != "AMessageNameLongerThanThirtyTwoChars" || m.Sender != "ANodeNameLongerThanThirtyTwoCharacters" {
		t.Errorf("got message %q from %q", m.Name, m.Sender)
	}
	s := m.Signals[0]
	if s.Name != "ASignalNameLongerThanThirtyTwoChars" || s.Comment == "" || s.Receivers[0] != "ANodeNameLongerThanThirtyTwoCharacters" {
		t.Errorf("got signal %q (comment %q, receivers %v)", s.Name, s.Comment, s.Receivers)
	}
	if m.Signals[1].Name != "S2" {
		t.Errorf("got %q, want S2 unchanged", m.Signals[1].Name)
	}

	clash := src + "BA_ \"SystemSignalLongSymbol\" SG_ 1 S2 \"ASignalNameLongerThanThirtyTwoChars\";\n"
	_, err = load(clash)
	want := "t.dbc:4:2: message AMessageNameLongerThanThirtyTwoChars: signals S2 and S1 (line 3) both have the long name ASignalNameLongerThanThirtyTwoChars"
	if err == nil || err.Error() != want {
		t.Errorf("got error %v, want %s", err, want)
	}
}

// TestSwitchOrder checks that a switch written after the signals it
// selects is moved before them, and that everything else keeps the DBC
// order.
func TestSwitchOrder(t *testing.T) {
	src := `BO_ 1 M: 8 X
 SG_ Plain1 : 56|8@1+ (1,0) [0|0] "" X
 SG_ Leaf m2 : 24|8@1+ (1,0) [0|0] "" X
 SG_ Page0 m0 : 8|8@1+ (1,0) [0|0] "" X
 SG_ Sub m1M : 16|8@1+ (1,0) [0|0] "" X
 SG_ Plain2 : 48|8@1+ (1,0) [0|0] "" X
 SG_ Root M : 0|8@1+ (1,0) [0|0] "" X
SG_MUL_VAL_ 1 Leaf Sub 2-2;
SG_MUL_VAL_ 1 Sub Root 1-1;
`
	db, err := load(src)
	if err != nil {
		t.Fatal(err)
	}
	wantTree(t, db.Messages[0], "Plain1", "Root M", "Sub Root=1 M", "Leaf Sub=2", "Page0 Root=0", "Plain2")
}

func TestSeveralFiles(t *testing.T) {
	parse := func(name, src string) *dbc.File {
		t.Helper()
		f, err := dbc.Parse(name, []byte(src))
		if err != nil {
			t.Fatal(err)
		}
		return f
	}
	const common = "BO_ 100 Shared: 8 X\n SG_ Counter : 0|8@1+ (1,0) [0|0] \"\" X\n"
	a := parse("a.dbc", common+"BO_ 2147483748 Ext: 8 X\n SG_ Counter : 0|4@1+ (1,0) [0|0] \"\" X\n")
	b := parse("b.dbc", "\n"+common+"BO_ 101 Other: 8 X\n SG_ Counter : 8|8@1+ (1,0) [0|0] \"\" X\n SG_ Speed : 16|8@1+ (1,0) [0|0] \"\" X\n")

	db, err := dbc.Compile(a, b)
	if err != nil {
		t.Fatal(err)
	}
	if len(db.Messages) != 3 {
		t.Errorf("got %d messages, want 3 (Shared once)", len(db.Messages))
	}
	want := "b.dbc:2:1: message Shared (ID 064) is also defined, identically, in a.dbc:1: this copy is ignored"
	if len(db.Warnings) != 1 || db.Warnings[0].String() != want {
		t.Errorf("got warnings %v, want %s", db.Warnings, want)
	}
	if db.Message(100, true).Name != "Ext" || db.Message(100, false).Name != "Shared" || db.Message(100, false).File != "a.dbc" {
		t.Error("standard and extended ID 100 not kept apart")
	}
	dup := db.DuplicateSignalNames()
	if len(dup) != 1 || len(dup["Counter"]) != 3 {
		t.Fatalf("duplicate names: got %v, want Counter in 3 messages", dup)
	}
	var where []string
	for _, s := range dup["Counter"] {
		where = append(where, s.FullName())
	}
	if got := strings.Join(where, " "); got != "Shared.Counter Ext.Counter Other.Counter" {
		t.Errorf("Counter in %s", got)
	}

	c := parse("c.dbc", "BO_ 100 Shared: 8 X\n SG_ Counter : 0|8@1- (1,0) [0|0] \"\" X\n")
	_, err = dbc.Compile(a, c)
	want = "c.dbc:1:1: message Shared (ID 064) differs from message Shared with the same ID in a.dbc:1"
	if err == nil || err.Error() != want || !errors.Is(err, dbc.ErrConflict) {
		t.Errorf("got error %v, want %s (ErrConflict)", err, want)
	}
}

func TestLoadMissingFile(t *testing.T) {
	_, err := dbc.Load("testdata/no-such.dbc")
	if err == nil || !strings.HasPrefix(err.Error(), "dbc: open testdata/no-such.dbc") {
		t.Errorf("got %v, want dbc: open … error", err)
	}
}

// TestValueKeys checks keys beyond int64: a 64-bit unsigned raw value
// is kept as the int64 with the same bits, which is how a decoder that
// looks labels up by int64(raw) finds it.
func TestValueKeys(t *testing.T) {
	db, err := load(msg1 + " SG_ S : 0|64@1+ (1,0) [0|0] \"\" X\n" +
		"VAL_ 1 S 18446744073709551615 \"all ones\" 9223372036854775808 \"top bit\" -9223372036854775808 \"min\" 0 \"zero\";")
	if err != nil {
		t.Fatal(err)
	}
	wantValues(t, db.Messages[0].Signals[0], []dbc.ValueDescription{
		{Value: -1 << 63, Label: "min"}, // 1<<63 and -1<<63 have the same bits: the later wins
		{Value: -1, Label: "all ones"},
		{Value: 0, Label: "zero"},
	})
}

// TestOddityWarnings: a signal that loads but cannot mean what it says
// (factor 0, minimum above maximum, a multiplexer value its switch can
// never hold, integer values beyond int64) is loaded with a warning
// naming it and its line; the ordinary signals beside them get none.
func TestOddityWarnings(t *testing.T) {
	src := `BO_ 1 M: 8 X
 SG_ Ok : 0|8@1+ (0.5,-10) [-10|117.5] "" X
 SG_ Zero : 8|8@1+ (0,3) [0|0] "" X
 SG_ Upside : 16|8@1+ (1,0) [100|0] "" X
 SG_ Sw M : 24|2@1+ (1,0) [0|0] "" X
 SG_ Page3 m3 : 32|8@1+ (1,0) [0|0] "" X
 SG_ Page4 m4 : 40|8@1+ (1,0) [0|0] "" X
BO_ 2 N: 8 X
 SG_ Huge : 0|64@1+ (1000,0) [0|0] "" X
 SG_ Whole : 0|64@1+ (1,0) [0|0] "" X
 SG_ Neg : 0|64@1- (1,0) [0|0] "" X
 SG_ NegScaled : 0|64@1- (-1,0) [0|0] "" X
 SG_ Frac : 0|64@1- (0.001,0) [0|0] "" X
BO_ 3 P: 8 X
 SG_ SSw M : 0|4@1- (1,0) [0|0] "" X
 SG_ High m7 : 8|8@1+ (1,0) [0|0] "" X
 SG_ Over m8 : 16|8@1+ (1,0) [0|0] "" X
 SG_ Ranged m0 : 24|8@1+ (1,0) [0|0] "" X
 SG_ Ranged2 m0 : 32|8@1+ (1,0) [0|0] "" X
SG_MUL_VAL_ 3 Ranged SSw 0-0, 9-20;
SG_MUL_VAL_ 3 Ranged2 SSw 16-20;
`
	db, err := load(src)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, w := range db.Warnings {
		got = append(got, w.String())
	}
	want := []string{
		"t.dbc:3:2: signal M.Zero: factor 0: every value is the offset 3, whatever the frame holds",
		"t.dbc:4:2: signal M.Upside: minimum 100 is more than maximum 0: the range is ignored, no value is flagged out of range",
		"t.dbc:7:2: signal M.Page4: multiplexer value 4 can never occur: switch Sw has 2 bits (raw 0 to 3): the signal is never decoded for it",
		"t.dbc:9:2: signal N.Huge: raw × 1000 + 0 reaches 0 to 18446744073709551615000, beyond the 64-bit integers: such values are not exact (decoded as rounded floats)",
		"t.dbc:12:2: signal N.NegScaled: raw × -1 + 0 reaches -9223372036854775807 to 9223372036854775808, beyond the 64-bit integers: such values are not exact (decoded as rounded floats)",
		"t.dbc:17:2: signal P.Over: multiplexer value 8 can never occur: switch SSw has 4 bits (raw -8 to 7): the signal is never decoded for it",
		"t.dbc:18:2: signal P.Ranged: multiplexer value 9–20 can never occur: switch SSw has 4 bits (raw -8 to 7): the signal is never decoded for it",
		"t.dbc:19:2: signal P.Ranged2: multiplexer value 16–20 can never occur: switch SSw has 4 bits (raw -8 to 7): the signal is never decoded for it",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("got warnings\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}
