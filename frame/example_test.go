package frame_test

import (
	"fmt"

	"github.com/yukart/candec/frame"
)

// A frame as a reader of can0 would fill it: a classic frame with an
// 11-bit ID, and a CAN FD frame with a 29-bit ID sent with bit-rate
// switching. Only Payload's bytes are the frame's data.
func Example() {
	classic := frame.Frame{Time: 1760000000123456789, ID: 0x100, Len: 2}
	classic.Data[0], classic.Data[1] = 0x2c, 0x01
	fmt.Printf("%03X extended=%v data=% x\n", classic.ID, classic.Extended(), classic.Payload())

	fd := frame.Frame{Time: 1760000000124000000, ID: 0x18FEF100, Bus: 1,
		Flags: frame.Extended | frame.FD | frame.BRS, Len: 12}
	fmt.Printf("%08X extended=%v fd=%v bus=can%d len=%d fdflags=%d\n",
		fd.ID, fd.Extended(), fd.Flags&frame.FD != 0, fd.Bus, len(fd.Payload()), fd.FDFlags())
	// Output:
	// 100 extended=false data=2c 01
	// 18FEF100 extended=true fd=true bus=can1 len=12 fdflags=1
}
