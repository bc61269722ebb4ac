package decoder

import (
	"fmt"
	"path/filepath"
	"testing"
	"unsafe"

	"github.com/yukart/candec/dbc"
	"github.com/yukart/candec/frame"
	"github.com/yukart/candec/internal/testkit/realdata"
)

// j1939DBC has the two messages of cantools' j1939 test file, a PDU1
// (0x15340201: priority 5, data page 1, PF 0x34, destination 0x02,
// source 0x01) and a PDU2 (0x15F01002: PF 0xF0, PS 0x10, source 0x02),
// plus, in the same PGN as Message1, a J1939 message from source 0x07
// and a message that says it is plain extended CAN.
const j1939DBC = `VERSION ""
BU_: Node1 Node2
BO_ 2503213569 Message1: 8 Node1
 SG_ Signal1 : 0|8@1- (1,0) [0|0] "" Node2
BO_ 2515537922 Message2: 8 Node2
 SG_ Signal2 : 0|8@1- (1,0) [0|0] "" Node1
BO_ 2503214343 Message1From07: 8 Node1
 SG_ Signal3 : 8|8@1+ (1,0) [0|0] "" Node2
BO_ 2503245313 PlainExtended: 8 Node1
 SG_ Signal4 : 16|8@1+ (1,0) [0|0] "" Node2
BO_ 513 Standard: 8 Node1
 SG_ Signal5 : 24|8@1+ (1,0) [0|0] "" Node2
BA_DEF_ "ProtocolType" STRING ;
BA_DEF_ BO_ "VFrameFormat" ENUM "StandardCAN","ExtendedCAN","reserved","J1939PG";
BA_DEF_DEF_ "ProtocolType" "J1939";
BA_DEF_DEF_ "VFrameFormat" "J1939PG";
BA_ "VFrameFormat" BO_ 2503245313 1;
`

func j1939Decoder(t testing.TB) *Decoder {
	t.Helper()
	f, err := dbc.Parse("j1939.dbc", []byte(j1939DBC))
	if err != nil {
		t.Fatal(err)
	}
	db, err := dbc.Compile(f)
	if err != nil {
		t.Fatal(err)
	}
	return New(db)
}

func extFrame(id uint32, data ...byte) *frame.Frame {
	f := frameOf(id, data...)
	f.Flags = frame.Extended
	return f
}

func TestDecodeJ1939(t *testing.T) {
	data := []byte{0xFE, 2, 3, 4, 5, 6, 7, 8}
	tests := []struct {
		name string
		f    *frame.Frame
		// want is "message signal=value sa=XX", "message signal=value"
		// without a source address, or "" for no match.
		want string
	}{
		{"PDU1, its own ID", extFrame(0x15340201, data...), "Message1 Signal1=-2 sa=01"},
		{"PDU1, another destination", extFrame(0x1534FF01, data...), "Message1 Signal1=-2 sa=01"},
		{"PDU1, another source", extFrame(0x153402A5, data...), "Message1 Signal1=-2 sa=A5"},
		{"PDU1, another priority", extFrame(0x19340201, data...), "Message1 Signal1=-2 sa=01"},
		{"PDU1, priority 0", extFrame(0x01340233, data...), "Message1 Signal1=-2 sa=33"},
		{"PDU1, another data page", extFrame(0x14340201, data...), ""},
		{"PDU1, another PF", extFrame(0x15350201, data...), ""},
		{"PDU2, its own ID", extFrame(0x15F01002, data...), "Message2 Signal2=-2 sa=02"},
		{"PDU2, another source and priority", extFrame(0x0DF010F9, data...), "Message2 Signal2=-2 sa=F9"},
		{"PDU2, another PS: another PGN", extFrame(0x15F01102, data...), ""},
		{"exact ID wins over PGN", extFrame(0x15340507, data...), "Message1From07 Signal3=2 sa=07"},
		{"exact ID of a plain extended message in the PGN", extFrame(0x15347E01, data...), "PlainExtended Signal4=3"},
		{"11-bit frame, same low bits as Message1", frameOf(0x201&0x7FF, data...), "Standard Signal5=4"},
		{"11-bit frame, same low 11 bits as Message2", frameOf(0x15F01002&0x7FF, data...), ""},
		{"11-bit frame, Message1's low byte", frameOf(0x001, data...), ""},
	}
	d := j1939Decoder(t)
	buf := make([]Value, 0, d.MaxSignals())
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m, vals := d.Decode(tt.f, buf)
			got := ""
			if m != nil {
				got = m.Name
				for _, v := range vals {
					got += fmt.Sprintf(" %s=%d", v.Signal.Name, v.Int)
					if v.Flags&J1939 != 0 {
						got += fmt.Sprintf(" sa=%02X", v.SA)
					}
				}
			}
			if got != tt.want {
				t.Errorf("frame %08X: got %q, want %q", tt.f.ID, got, tt.want)
			}
		})
	}
}

// TestDecodeJ1939NotInOtherDatabases checks that without J1939 messages
// a 29-bit frame matches by its exact ID only.
func TestDecodeJ1939NotInOtherDatabases(t *testing.T) {
	m := message("EEC1", 0x0CF004FE, 8, intel("S", 0, 8, false, 1, 0))
	m.Extended = true
	d := New(database(t, m))
	buf := make([]Value, 0, d.MaxSignals())
	if got, vals := d.Decode(extFrame(0x0CF004FE, 1), buf); got != m || vals[0].Flags&J1939 != 0 {
		t.Errorf("exact ID: got %v, flags %05b; want EEC1 without J1939", got, vals[0].Flags)
	}
	if got, _ := d.Decode(extFrame(0x0CF00400, 1), buf); got != nil {
		t.Errorf("same PGN, another source: got %s, want no message", got.Name)
	}
}

// TestDecodeJ1939Reused checks that a buffer that held a J1939 frame's
// values says nothing of a source address for the next frame's.
func TestDecodeJ1939Reused(t *testing.T) {
	d := j1939Decoder(t)
	buf := make([]Value, 0, d.MaxSignals())
	_, buf = d.Decode(extFrame(0x1534FF01, 1), buf)
	_, buf = d.Decode(frameOf(0x201, 1), buf)
	if buf[0].Flags&J1939 != 0 {
		t.Errorf("11-bit frame after a J1939 one: got flags %05b, want no J1939", buf[0].Flags)
	}
}

func TestDecodeJ1939Allocs(t *testing.T) {
	d := j1939Decoder(t)
	buf := make([]Value, 0, d.MaxSignals())
	for _, f := range []*frame.Frame{extFrame(0x15340201, 1), extFrame(0x1534FF01, 1), extFrame(0x15F01102, 1)} {
		if allocs := testing.AllocsPerRun(1000, func() { _, buf = d.Decode(f, buf) }); allocs != 0 {
			t.Errorf("frame %08X: got %v allocations per Decode, want 0", f.ID, allocs)
		}
	}
}

// TestValueSize checks that the source address costs no space: it sits
// in what would be padding.
func TestValueSize(t *testing.T) {
	type withoutSA struct {
		Signal *dbc.Signal
		Raw    uint64
		Int    int64
		Phys   float64
		Flags  Flags
	}
	if got, want := unsafe.Sizeof(Value{}), unsafe.Sizeof(withoutSA{}); got != want {
		t.Errorf("got Value of %d bytes, want %d", got, want)
	}
}

// TestRealJ1939LogMatches decodes a J1939 truck log whose frames match
// the DBC by PGN only (EEC1 0x0CF004FE is on the bus as 0CF00400, CCVS1
// 0x18FEF1FE as 18FEF100) and compares every value with the reference
// decode, line for line.
func TestRealJ1939LogMatches(t *testing.T) {
	if testing.Short() {
		t.Skip("decodes 150411 frames")
	}
	dir := filepath.Join(realdata.Dir(t), "formats")
	db, err := dbc.Load(filepath.Join(dir, "CSS-Electronics-SAE-J1939-DEMO.dbc"))
	if err != nil {
		t.Fatal(err)
	}
	want, err := realdata.ReadDecodes(filepath.Join(dir, "css_asammdf-basics_00000001__CSS-Electronics-SAE-J1939-DEMO.jsonl"), "")
	if err != nil {
		t.Fatal(err)
	}
	var vals []Value
	got := map[realdata.Key][]string{}
	d := New(db)
	buf := make([]Value, 0, d.MaxSignals())
	sources := map[uint8]int{}
	eachLogFrame(t, filepath.Join(dir, "css_asammdf-basics_00000001.MF4.expected.log"), "", func(f *frame.Frame) {
		_, vs := d.Decode(f, buf)
		for _, v := range vs {
			if v.Flags&Truncated == 0 {
				k := realdata.Key{Micros: f.Time / 1e3, ID: f.ID, Signal: v.Signal.FullName()}
				got[k] = append(got[k], fmt.Sprint(len(vals)))
				vals = append(vals, v)
			}
			if v.Flags&J1939 == 0 {
				t.Fatalf("%s: got flags %05b, want J1939", v.Signal.FullName(), v.Flags)
			}
			sources[v.SA]++
		}
	})
	same := func(g, w string) bool {
		var i int
		fmt.Sscan(g, &i)
		return sameAsCantools(&vals[i], w) == ""
	}
	ok, bad, nbad := realdata.Diff(got, want, same, 10)
	for _, b := range bad {
		t.Error(b)
	}
	if ok != 7986 || nbad > 0 {
		t.Errorf("%d values match, %d do not; want 7986 and 0", ok, nbad)
	}
	if len(sources) != 1 || sources[0] != 7986 {
		t.Errorf("got source addresses %v, want 7986 values from 00", sources)
	}
	t.Logf("%+v", d.Stats)
}
