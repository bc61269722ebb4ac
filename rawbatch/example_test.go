package rawbatch_test

import (
	"fmt"

	"github.com/yukart/candec/frame"
	"github.com/yukart/candec/rawbatch"
)

// The two-frame batch of docs/wire-format.md.
func ExampleAppendBatch() {
	frames := []frame.Frame{
		{Time: 1696868256123456000, ID: 0x123, Bus: 0, Len: 4, Data: [64]byte{0xDE, 0xAD, 0xBE, 0xEF}},
		{Time: 1696868256123789000, ID: 0x1A2B3C4D, Flags: frame.Extended, Bus: 1, Len: 8,
			Data: [64]byte{1, 2, 3, 4, 5, 6, 7, 8}},
	}
	b, err := rawbatch.AppendBatch(nil, 41, frames)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("header % x\n", b[:rawbatch.HeaderSize])
	for i := 0; i < len(frames); i++ {
		p := b[rawbatch.HeaderSize+i*rawbatch.FrameSize:][:rawbatch.FrameSize]
		fmt.Printf("frame  % x | % x | % x | % x | % x | % x\n", p[0:8], p[8:12], p[12:13], p[13:14], p[14:16], p[16:24])
	}
	// Output:
	// header 01 00 02 00 29 00 00 00 00 00 00 00
	// frame  00 0a e0 44 b0 7c 8c 17 | 23 01 00 00 | 04 | 00 | 00 00 | de ad be ef 00 00 00 00
	// frame  c8 1e e5 44 b0 7c 8c 17 | 4d 3c 2b 9a | 08 | 01 | 00 00 | 01 02 03 04 05 06 07 08
}

func ExampleParse() {
	msg := []byte{
		1, 0, 1, 0, 7, 0, 0, 0, 0, 0, 0, 0, // version 1, count 1, seq 7
		0x00, 0x0a, 0xe0, 0x44, 0xb0, 0x7c, 0x8c, 0x17, // time
		0x23, 0x01, 0x00, 0x00, 2, 0, 0, 0, // ID 0x123, length 2, bus 0
		0xca, 0xfe, 0, 0, 0, 0, 0, 0,
	}
	b, err := rawbatch.Parse(msg)
	if err != nil {
		fmt.Println(err)
		return
	}
	var f frame.Frame
	for i := range b.Len() {
		b.Frame(i, &f)
		fmt.Printf("seq %d: can%d %03X#% X at %d\n", b.Seq()+uint64(i), f.Bus, f.ID, f.Payload(), f.Time)
	}
	_, err = rawbatch.Parse(msg[:30])
	fmt.Println(err)
	// Output:
	// seq 7: can0 123#CA FE at 1696868256123456000
	// rawbatch: message length does not match count: got 30, want 36 (byte 2)
}
