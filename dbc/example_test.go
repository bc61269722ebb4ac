package dbc_test

import (
	"fmt"

	"github.com/yukart/candec/dbc"
)

func Example() {
	src := `BO_ 2147484160 Battery: 8 BMS
 SG_ Index M : 0|8@1+ (1,0) [0|0] "" Vector__XXX
 SG_ Cell0 m0 : 8|16@1+ (0.001,0) [0|5] "V" Vector__XXX
 SG_ Cell1 m1 : 8|16@1+ (0.001,0) [0|5] "V" Vector__XXX
BA_DEF_ BO_ "GenMsgCycleTime" INT 0 10000;
BA_ "GenMsgCycleTime" BO_ 2147484160 100;
`
	f, err := dbc.Parse("battery.dbc", []byte(src))
	if err != nil {
		fmt.Println(err)
		return
	}
	db, err := dbc.Compile(f)
	if err != nil {
		fmt.Println(err)
		return
	}
	m := db.Message(0x200, true)
	fmt.Println(m.Name, m.CycleTime)
	for _, s := range m.Signals {
		if s.Mux != nil {
			fmt.Printf("%s when %s is %d\n", s.Name, s.Mux.Switch.Name, s.Mux.Ranges[0].Lo)
		}
	}

	_, err = dbc.Parse("broken.dbc", []byte("BO_ 1 Broken 8 X\n"))
	fmt.Println(err)
	// Output:
	// Battery 100ms
	// Cell0 when Index is 0
	// Cell1 when Index is 1
	// broken.dbc:1:14: expected ":" after the message name, found "8"
}
