package valuelog

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"math"
	"testing"

	"github.com/yukart/candec/dbc"
	"github.com/yukart/candec/decoder"
	"github.com/yukart/candec/frame"
)

func TestAppendSeconds(t *testing.T) {
	for _, c := range []struct {
		ns   int64
		want string
	}{
		{0, "0.000000"},
		{1696868256123456000, "1696868256.123456"},
		{1696868256000001999, "1696868256.000001"},
		{46408584930000, "46408.584930"},
		{-1500000, "-0.001500"},
	} {
		if got := string(AppendSeconds(nil, c.ns)); got != c.want {
			t.Errorf("AppendSeconds(%d) = %s, want %s", c.ns, got, c.want)
		}
	}
}

func TestAppendValue(t *testing.T) {
	tenth := &dbc.Signal{Name: "S", Type: dbc.Integer, Factor: 0.1}
	f32 := &dbc.Signal{Name: "F", Type: dbc.Float32, Factor: 1}
	for _, c := range []struct {
		name string
		v    decoder.Value
		want string
	}{
		{"exact", decoder.Value{Int: -5, Phys: -5, Flags: decoder.Exact}, "-5"},
		{"unsigned", decoder.Value{Raw: math.MaxUint64, Phys: 1.8446744073709552e19, Flags: decoder.Exact | decoder.Unsigned}, "18446744073709551615"},
		{"float without a signal", decoder.Value{Phys: 0.30000000000000004}, "0.30000000000000004"},
		{"factor 0.1 tidied", decoder.Value{Signal: tenth, Raw: 7, Phys: 7 * 0.1}, "0.7"},
		{"integral float", decoder.Value{Signal: tenth, Raw: 250, Phys: 25}, "25.0"},
		{"float32 shortest", decoder.Value{Signal: f32, Phys: float64(float32(0.1)), Flags: decoder.Float}, "0.1"},
		{"nan", decoder.Value{Signal: f32, Phys: math.NaN(), Flags: decoder.Float}, ""},
		{"+inf", decoder.Value{Signal: f32, Phys: math.Inf(1), Flags: decoder.Float}, ""},
	} {
		if got := string(AppendValue(nil, &c.v)); got != c.want {
			t.Errorf("%s: got %s, want %s", c.name, got, c.want)
		}
	}
}

// TestWriter pins both formats for the cases the rule covers: an exact
// value with unit, label and oor; a scaled value tidied; NaN (null plus
// nonfinite, not oor); +Inf beyond the range (oor); a truncated value
// left out and counted. The JSON lines must parse, the CSV must read
// back with as many fields as the header.
func TestWriter(t *testing.T) {
	m := &dbc.Message{Name: "GEAR", ID: 0x123, Length: 1}
	s := &dbc.Signal{Name: "Gear", Message: m, Length: 4, Factor: 1, Unit: "a,b",
		Values: []dbc.ValueDescription{{Value: 2, Label: `say "D"`}}}
	tenth := &dbc.Signal{Name: "T", Message: m, Type: dbc.Integer, Factor: 0.1}
	fl := &dbc.Signal{Name: "F", Message: m, Type: dbc.Float32, Factor: 1, Min: 0, Max: 1}
	m.Signals = []*dbc.Signal{s, tenth, fl}
	f := &frame.Frame{Time: 1_500_000_000_000_000_000, ID: 0x123, Len: 1}
	vals := []decoder.Value{
		{Signal: s, Raw: 2, Int: 2, Phys: 2, Flags: decoder.Exact | decoder.OutOfRange},
		{Signal: s, Phys: math.NaN(), Flags: decoder.Truncated},
		{Signal: tenth, Raw: 7, Phys: 7 * 0.1},
		{Signal: fl, Phys: math.NaN(), Flags: decoder.Float}, // the decoder never marks NaN out of range
		{Signal: fl, Phys: math.Inf(1), Flags: decoder.Float | decoder.OutOfRange},
	}
	const head = `{"t":1500000000.000000,"ts":1500000000000000000,"bus":"can0","id":291,`
	const row = "1500000000.000000,1500000000000000000,can0,291,"
	for _, c := range []struct {
		format Format
		want   string
	}{
		{JSON, head + `"signal":"GEAR.Gear","value":2,"unit":"a,b","label":"say \"D\"","oor":true}` + "\n" +
			head + `"signal":"GEAR.T","value":0.7}` + "\n" +
			head + `"signal":"GEAR.F","value":null,"nonfinite":"NaN"}` + "\n" +
			head + `"signal":"GEAR.F","value":null,"nonfinite":"+Inf","oor":true}` + "\n"},
		{CSV, Header +
			row + "GEAR.Gear,2,,\"a,b\",\"say \"\"D\"\"\",true\n" +
			row + "GEAR.T,0.7,,,,\n" +
			row + "GEAR.F,,NaN,,,\n" +
			row + "GEAR.F,,+Inf,,,true\n"},
	} {
		var b bytes.Buffer
		w := NewWriter(&b, c.format)
		if err := w.Write(f, "can0", vals); err != nil {
			t.Fatal(err)
		}
		if err := w.Flush(); err != nil {
			t.Fatal(err)
		}
		if got := b.String(); got != c.want {
			t.Errorf("format %d:\ngot  %s\nwant %s", c.format, got, c.want)
		}
		if w.Truncated() != 1 || w.Lines() != 4 {
			t.Errorf("format %d: Truncated() = %d, Lines() = %d, want 1 and 4", c.format, w.Truncated(), w.Lines())
		}
		if c.format == JSON {
			for _, line := range bytes.Split(bytes.TrimSpace(b.Bytes()), []byte("\n")) {
				var v map[string]any
				if err := json.Unmarshal(line, &v); err != nil {
					t.Errorf("line %s: %v", line, err)
				}
			}
		} else {
			r := csv.NewReader(&b)
			r.FieldsPerRecord = 10
			if _, err := r.ReadAll(); err != nil {
				t.Errorf("CSV: %v", err)
			}
		}
	}
}

// TestWriterJ1939 checks that a J1939 value carries its frame's source
// address as "sa" after "id", in JSON only, and that a value without the
// J1939 flag has none, whatever its SA field holds.
func TestWriterJ1939(t *testing.T) {
	m := &dbc.Message{Name: "EEC1", ID: 0x0CF004FE, Extended: true, J1939: true, Length: 8}
	s := &dbc.Signal{Name: "EngineSpeed", Message: m, Length: 16, Factor: 1}
	m.Signals = []*dbc.Signal{s}
	f := &frame.Frame{Time: 1_500_000_000_000_000_000, ID: 0x0CF00400, Flags: frame.Extended, Len: 8}
	vals := []decoder.Value{
		{Signal: s, Raw: 5, Int: 5, Phys: 5, Flags: decoder.Exact | decoder.J1939, SA: 0x00},
		{Signal: s, Raw: 6, Int: 6, Phys: 6, Flags: decoder.Exact | decoder.J1939, SA: 0xF9},
		{Signal: s, Raw: 7, Int: 7, Phys: 7, Flags: decoder.Exact, SA: 0x33},
	}
	const head = `{"t":1500000000.000000,"ts":1500000000000000000,"bus":"can0","id":217056256,`
	const row = "1500000000.000000,1500000000000000000,can0,217056256,"
	for _, c := range []struct {
		format Format
		want   string
	}{
		{JSON, head + `"sa":0,"signal":"EEC1.EngineSpeed","value":5}` + "\n" +
			head + `"sa":249,"signal":"EEC1.EngineSpeed","value":6}` + "\n" +
			head + `"signal":"EEC1.EngineSpeed","value":7}` + "\n"},
		{CSV, Header +
			row + "EEC1.EngineSpeed,5,,,,\n" +
			row + "EEC1.EngineSpeed,6,,,,\n" +
			row + "EEC1.EngineSpeed,7,,,,\n"},
	} {
		var b bytes.Buffer
		w := NewWriter(&b, c.format)
		if err := w.Write(f, "can0", vals); err != nil {
			t.Fatal(err)
		}
		if err := w.Flush(); err != nil {
			t.Fatal(err)
		}
		if got := b.String(); got != c.want {
			t.Errorf("format %d:\ngot  %s\nwant %s", c.format, got, c.want)
		}
	}
}
