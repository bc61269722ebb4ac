package decoder_test

import (
	"fmt"

	"github.com/yukart/candec/dbc"
	"github.com/yukart/candec/decoder"
	"github.com/yukart/candec/frame"
)

func Example() {
	// A battery message: a multiplexer selects which cell group follows.
	index := &dbc.Signal{Name: "Index", Start: 0, Length: 4, Factor: 1, Multiplexer: true}
	db, err := dbc.NewDatabase([]*dbc.Message{{
		Name: "BMS", ID: 0x3A0, Length: 8,
		Signals: []*dbc.Signal{
			index,
			{Name: "Current", Start: 23, Length: 16, Order: dbc.BigEndian, Signed: true, Factor: 0.1, Unit: "A"},
			{Name: "Cell0", Start: 32, Length: 16, Factor: 0.001, Unit: "V", Min: 2.5, Max: 4.2,
				Mux: &dbc.Mux{Switch: index, Ranges: []dbc.MuxRange{{Lo: 0, Hi: 0}}}},
			{Name: "Cell4", Start: 32, Length: 16, Factor: 0.001, Unit: "V", Min: 2.5, Max: 4.2,
				Mux: &dbc.Mux{Switch: index, Ranges: []dbc.MuxRange{{Lo: 1, Hi: 1}}}},
			{Name: "Temp", Start: 48, Length: 8, Factor: 1, Offset: -40, Unit: "°C"},
		},
	}})
	if err != nil {
		fmt.Println(err)
		return
	}
	d := decoder.New(db)
	buf := make([]decoder.Value, 0, d.MaxSignals())

	f := frame.Frame{ID: 0x3A0, Len: 8, Data: [frame.MaxLen]byte{0x01, 0x00, 0xFF, 0x38, 0x68, 0x10, 0x41}}
	msg, vals := d.Decode(&f, buf)
	fmt.Println(msg.Name)
	for _, v := range vals {
		if v.Flags&decoder.Exact != 0 {
			fmt.Printf("%s = %d%s\n", v.Signal.Name, v.Int, unit(v.Signal))
		} else {
			fmt.Printf("%s = %.3f%s, out of range: %v\n", v.Signal.Name, v.Phys, unit(v.Signal), v.Flags&decoder.OutOfRange != 0)
		}
	}

	f.Len = 5 // too short for Cell4's second byte and for Temp
	_, vals = d.Decode(&f, buf)
	for _, v := range vals {
		fmt.Printf("%s truncated: %v\n", v.Signal.Name, v.Flags&decoder.Truncated != 0)
	}
	fmt.Printf("frames %d, short %d\n", d.Stats.Frames, d.Stats.Short)
	// Output:
	// BMS
	// Index = 1
	// Current = -20.000 A, out of range: false
	// Cell4 = 4.200 V, out of range: false
	// Temp = 25 °C
	// Index truncated: false
	// Current truncated: false
	// Cell4 truncated: true
	// Temp truncated: true
	// frames 2, short 1
}

func unit(s *dbc.Signal) string {
	if s.Unit == "" {
		return ""
	}
	return " " + s.Unit
}
