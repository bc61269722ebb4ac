package valuelog

import (
	"bytes"
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
	for _, c := range []struct {
		name string
		v    decoder.Value
		want string
	}{
		{"exact", decoder.Value{Int: -5, Phys: -5, Flags: decoder.Exact}, "-5"},
		{"unsigned", decoder.Value{Raw: math.MaxUint64, Phys: 1.8446744073709552e19, Flags: decoder.Exact | decoder.Unsigned}, "18446744073709551615"},
		{"float", decoder.Value{Phys: 0.30000000000000004}, "0.30000000000000004"},
		{"nan", decoder.Value{Phys: math.NaN(), Flags: decoder.Float}, `"NaN"`},
		{"+inf", decoder.Value{Phys: math.Inf(1), Flags: decoder.Float}, `"Infinity"`},
		{"-inf", decoder.Value{Phys: math.Inf(-1), Flags: decoder.Float}, `"-Infinity"`},
	} {
		if got := string(AppendValue(nil, &c.v)); got != c.want {
			t.Errorf("%s: got %s, want %s", c.name, got, c.want)
		}
	}
}

func TestWriter(t *testing.T) {
	m := &dbc.Message{Name: "GEAR", ID: 0x123, Length: 1}
	s := &dbc.Signal{Name: "Gear", Message: m, Length: 4, Factor: 1, Unit: "a,b",
		Values: []dbc.ValueDescription{{Value: 2, Label: `say "D"`}}}
	m.Signals = []*dbc.Signal{s}
	f := &frame.Frame{Time: 1_500_000_000_000_000_000, ID: 0x123, Len: 1}
	vals := []decoder.Value{
		{Signal: s, Raw: 2, Int: 2, Phys: 2, Flags: decoder.Exact | decoder.OutOfRange},
		{Signal: s, Phys: math.NaN(), Flags: decoder.Truncated},
	}
	for _, c := range []struct {
		format Format
		want   string
	}{
		{JSON, `{"t":1500000000.000000,"ts":1500000000000000000,"bus":"can0","id":291,"signal":"GEAR.Gear","value":2,"unit":"a,b","label":"say \"D\"","flags":["out_of_range"]}` + "\n"},
		{CSV, "t,ts,bus,id,signal,value,unit,label,flags\n1500000000.000000,1500000000000000000,can0,291,GEAR.Gear,2,\"a,b\",\"say \"\"D\"\"\",out_of_range\n"},
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
