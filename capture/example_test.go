package capture_test

import (
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/yukart/candec/capture"
	"github.com/yukart/candec/frame"
)

func ExampleReader() {
	log := `(1696868256.123456) can0 123#DEADBEEF
(1696868256.123789) can1 1A2B3C4D#0102030405060708
(1696868256.124000) can0 123#R
(1696868256.124100) can0 12#00
`
	r := capture.NewReader(strings.NewReader(log), capture.Options{})
	w := capture.NewWriter(os.Stdout)
	var f frame.Frame
	for {
		err := r.Next(&f)
		if err == io.EOF {
			break
		}
		if err != nil {
			fmt.Println(err)
			continue
		}
		fmt.Printf("t=%d bus=%d id=%X ext=%v len=%d: ", f.Time, f.Bus, f.ID, f.Extended(), f.Len)
		_ = w.Write(&f, r.Interface(f.Bus))
		_ = w.Flush()
	}
	// Output:
	// t=1696868256123456000 bus=0 id=123 ext=false len=4: (1696868256.123456) can0 123#DEADBEEF
	// t=1696868256123789000 bus=1 id=1A2B3C4D ext=true len=8: (1696868256.123789) can1 1A2B3C4D#0102030405060708
	// t=1696868256124000000 bus=0 id=123 ext=false len=0: (1696868256.124000) can0 123#R
	// capture: line 4: column 26: CAN ID has 2 hex digits, want 3 (11-bit) or 8 (29-bit): "(1696868256.124100) can0 12#00"
}

func ExampleNewSource() {
	for _, in := range []string{
		"\n(1696868256.123456) can0 123#DEADBEEF\n",
		"date Mon Oct 9 16:17:36.000 2023\nbase hex  timestamps absolute\n   0.001000 2  1A0             Rx   d 2 01 02\n",
		"hello\n",
	} {
		src, err := capture.NewSource(strings.NewReader(in), capture.Options{})
		if err != nil {
			fmt.Println(err)
			continue
		}
		var f frame.Frame
		for src.Next(&f) == nil {
			fmt.Printf("%s %X % X\n", src.Interface(f.Bus), f.ID, f.Data[:f.Len])
		}
	}
	// Output:
	// can0 123 DE AD BE EF
	// can1 1A0 01 02
	// capture: unknown format: its first line is "hello"; known formats: candump, asc, trc, blf, mf4
}
