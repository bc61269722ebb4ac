package capture

import (
	"bytes"
	"errors"
	"io"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/yukart/candec/frame"
)

func mk(time int64, id uint32, flags frame.Flags, bus uint8, data ...byte) frame.Frame {
	f := frame.Frame{Time: time, ID: id, Flags: flags, Bus: bus, Len: uint8(len(data))}
	copy(f.Data[:], data)
	return f
}

func seq(n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(i)
	}
	return b
}

func TestReadLine(t *testing.T) {
	tests := []struct {
		name  string
		line  string
		want  frame.Frame
		iface string
	}{
		{"11-bit", "(1696868256.123456) can0 123#DEADBEEF",
			mk(1696868256123456000, 0x123, 0, 0, 0xDE, 0xAD, 0xBE, 0xEF), "can0"},
		{"11-bit no data", "(1696868256.123456) can0 7FF#",
			mk(1696868256123456000, 0x7FF, 0, 0), "can0"},
		{"29-bit", "(1696868256.123456) can1 1A2B3C4D#0102030405060708",
			mk(1696868256123456000, 0x1A2B3C4D, frame.Extended, 1, 1, 2, 3, 4, 5, 6, 7, 8), "can1"},
		{"29-bit small ID stays extended", "(1.000000) can0 00000123#",
			mk(1e9, 0x123, frame.Extended, 0), "can0"},
		{"lower-case hex", "(1.000000) can0 1ab#dead",
			mk(1e9, 0x1AB, 0, 0, 0xDE, 0xAD), "can0"},
		{"remote", "(1.000000) can0 123#R",
			mk(1e9, 0x123, frame.Remote, 0), "can0"},
		{"remote with length", "(1.000000) can0 123#R5",
			frame.Frame{Time: 1e9, ID: 0x123, Flags: frame.Remote, Len: 5}, "can0"},
		{"remote lower-case, 29-bit", "(1.000000) can0 1FFFFFFF#r",
			mk(1e9, 0x1FFFFFFF, frame.Extended|frame.Remote, 0), "can0"},
		{"remote length 8 with raw DLC", "(1.000000) can0 123#R8_F",
			frame.Frame{Time: 1e9, ID: 0x123, Flags: frame.Remote, Len: 8}, "can0"},
		{"CAN FD", "(1.000000) can0 123##1112233445566778899AABB",
			mk(1e9, 0x123, frame.FD|frame.BRS, 0, 0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77, 0x88, 0x99, 0xAA, 0xBB), "can0"},
		{"CAN FD ESI", "(1.000000) can0 123##211", mk(1e9, 0x123, frame.FD|frame.ESI, 0, 0x11), "can0"},
		{"CAN FD BRS and ESI", "(1.000000) can0 123##311", mk(1e9, 0x123, frame.FD|frame.BRS|frame.ESI, 0, 0x11), "can0"},
		{"CAN FD 64 bytes", "(1.000000) can0 1A2B3C4D##0" + strings.Repeat("AB", 64),
			mk(1e9, 0x1A2B3C4D, frame.Extended|frame.FD, 0, bytes.Repeat([]byte{0xAB}, 64)...), "can0"},
		{"CAN FD no data", "(1.000000) can0 123##4",
			mk(1e9, 0x123, frame.FD, 0), "can0"},
		{"error frame", "(1.000000) can0 20000080#0000000000000000",
			mk(1e9, 0x80, frame.Error, 0, 0, 0, 0, 0, 0, 0, 0, 0), "can0"},
		{"error frame, all classes", "(1.000000) can0 3FFFFFFF#",
			mk(1e9, 0x1FFFFFFF, frame.Error, 0), "can0"},
		{"raw DLC after 8 bytes", "(1.000000) can0 123#0102030405060708_9",
			mk(1e9, 0x123, 0, 0, 1, 2, 3, 4, 5, 6, 7, 8), "can0"},
		{"dots between bytes", "(1.000000) can0 123#01.02.03",
			mk(1e9, 0x123, 0, 0, 1, 2, 3), "can0"},
		{"direction T", "(1.000000) can0 123#0102 T",
			mk(1e9, 0x123, 0, 0, 1, 2), "can0"},
		{"direction R", "(1.000000) can0 123#0102 R",
			mk(1e9, 0x123, 0, 0, 1, 2), "can0"},
		{"direction after remote", "(1.000000) can0 123#R2 R",
			frame.Frame{Time: 1e9, ID: 0x123, Flags: frame.Remote, Len: 2}, "can0"},
		{"padded interface and trailing blanks", "(1.000000)   can0\t123#01  ",
			mk(1e9, 0x123, 0, 0, 1), "can0"},
		{"CRLF", "(1.000000) can0 123#01\r",
			mk(1e9, 0x123, 0, 0, 1), "can0"},
		{"seconds padded to 10 digits", "(0000046408.584930) can0 260#08",
			mk(46408584930000, 0x260, 0, 0, 8), "can0"},
		{"nanoseconds exact", "(1696868256.123456789) can0 123#",
			mk(1696868256123456789, 0x123, 0, 0), "can0"},
		{"one decimal", "(12.5) can0 123#", mk(12500000000, 0x123, 0, 0), "can0"},
		{"zero time", "(0.0) can0 123#", mk(0, 0x123, 0, 0), "can0"},
		{"latest time", "(9223372036.854775807) can0 123#", mk(1<<63-1, 0x123, 0, 0), "can0"},
		{"other interface", "(1.000000) slcan0 123#", mk(1e9, 0x123, 0, 255), "slcan0"},
		{"vcan", "(1.000000) vcan3 123#", mk(1e9, 0x123, 0, 3), "vcan3"},
		{"can255", "(1.000000) can255 123#", mk(1e9, 0x123, 0, 255), "can255"},
		{"can256 is another name", "(1.000000) can256 123#", mk(1e9, 0x123, 0, 255), "can256"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := NewReader(strings.NewReader(tt.line), Options{})
			got := frame.Frame{Data: [64]byte{63: 1}} // stale bytes must be cleared
			if err := r.Next(&got); err != nil {
				t.Fatalf("got error %v, want nil", err)
			}
			if got != tt.want {
				t.Errorf("got  %+v\nwant %+v", got, tt.want)
			}
			if name := r.Interface(got.Bus); name != tt.iface {
				t.Errorf("Interface(%d): got %q, want %q", got.Bus, name, tt.iface)
			}
			if err := r.Next(&got); err != io.EOF {
				t.Errorf("after the line: got %v, want io.EOF", err)
			}
		})
	}
}

func TestReadLineErrors(t *testing.T) {
	tests := []struct {
		line string
		msg  string
	}{
		{"1.000000) can0 123#", `column 1: want "(" to open the timestamp, got '1'`},
		{"(.5) can0 123#", `column 2: want the timestamp's seconds, got '.'`},
		{"(1) can0 123#", `column 3: want "." after the timestamp's seconds, got ')'`},
		{"(1", `column 3: want "." after the timestamp's seconds, got end of line`},
		{"(-1.0) can0 123#", `column 2: want the timestamp's seconds, got '-'`},
		{"(1.) can0 123#", "column 4: want 1 to 9 digits of fraction in the timestamp"},
		{"(1.1234567890) can0 123#", "column 4: want 1 to 9 digits of fraction in the timestamp"},
		{"(1.5 can0 123#", `column 5: want ")" to close the timestamp, got ' '`},
		{"(1.5x) can0 123#", `column 5: want ")" to close the timestamp, got 'x'`},
		{"(9223372036.854775808) can0 123#", "column 2: timestamp beyond the year 2262"},
		{"(99999999999999999999999.0) can0 123#", "column 2: timestamp beyond the year 2262"},
		{"(1.0)can0 123#", "column 6: want a space, got 'c'"},
		{"(1.0) can0", "column 11: want a space, got end of line"},
		{"(1.0) can0 ", `column 12: want "#" after the CAN ID`},
		{"(1.0) can0 123", `column 15: want "#" after the CAN ID`},
		{"(1.0) can0 12G#00", "column 14: invalid character 'G' in the CAN ID"},
		{"(1.0) can0 #00", "column 12: CAN ID has 0 hex digits, want 3 (11-bit) or 8 (29-bit)"},
		{"(1.0) can0 12#00", "column 12: CAN ID has 2 hex digits, want 3 (11-bit) or 8 (29-bit)"},
		{"(1.0) can0 1234#00", "column 12: CAN ID has 4 hex digits, want 3 (11-bit) or 8 (29-bit)"},
		{"(1.0) can0 123456789#00", "column 12: CAN ID has 9 hex digits, want 3 (11-bit) or 8 (29-bit)"},
		{"(1.0) can0 800#00", "column 12: 11-bit CAN ID over 7FF"},
		{"(1.0) can0 80000123#00", "column 12: 29-bit CAN ID has bit 30 or 31 set"},
		{"(1.0) can0 40000123#00", "column 12: 29-bit CAN ID has bit 30 or 31 set"},
		{"(1.0) can0 123#0G", "column 17: invalid hex digit 'G' in the data"},
		{"(1.0) can0 123#G0", "column 16: invalid hex digit 'G' in the data"},
		{"(1.0) can0 123#012", "column 18: odd number of hex digits in the data"},
		{"(1.0) can0 123#012 T", "column 18: odd number of hex digits in the data"},
		{"(1.0) can0 123#010203040506070809", `column 32: more than 8 data bytes (CAN FD frames are written with "##")`},
		{"(1.0) can0 123##0" + strings.Repeat("00", 65), "column 146: more than 64 data bytes"},
		{"(1.0) can0 123##", `column 17: want a hex digit of CAN FD flags after "##", got end of line`},
		{"(1.0) can0 123##X00", `column 17: want a hex digit of CAN FD flags after "##", got 'X'`},
		{"(1.0) can0 123###0000", "column 17: CAN XL frames are not supported"},
		{"(1.0) can0 123#R9", "column 17: remote frame length '9' over 8"},
		{"(1.0) can0 123#RX", "column 17: unexpected 'X' after the frame"},
		{"(1.0) can0 123#R8_8", `column 19: want a DLC from 9 to F after "_", got '8'`},
		{"(1.0) can0 123#0102_9", "column 20: invalid hex digit '_' in the data"},
		{"(1.0) can0 123#0102030405060708_", `column 33: want a DLC from 9 to F after "_", got end of line`},
		{"(1.0) can0 123#0102 X", "column 21: unexpected 'X' after the frame"},
		{"(1.0) can0 123#0102 T T", "column 23: unexpected 'T' after the frame"},
		{"(1.0) can0 123#0102 TX", "column 22: unexpected 'X' after the frame"},
		{"(1.0) can\x000 123#", `column 10: invalid character '\x00' in the interface name`},
		{"(1.0) can\x7f 123#", `column 10: invalid character '\x7f' in the interface name`},
		{"(1.0) " + strings.Repeat("x", 65) + " 123#", "column 7: interface name longer than 64 bytes"},
	}
	for _, tt := range tests {
		t.Run(tt.line, func(t *testing.T) {
			in := "(0.1) can0 001#\n\n" + tt.line + "\n(0.2) can0 002#\n"
			r := NewReader(strings.NewReader(in), Options{})
			var f frame.Frame
			if err := r.Next(&f); err != nil {
				t.Fatalf("first line: %v", err)
			}
			err := r.Next(&f)
			var le *LineError
			if !errors.As(err, &le) {
				t.Fatalf("got %v, want a *LineError", err)
			}
			want := &LineError{Line: 3, Text: tt.line, Msg: tt.msg}
			if len(want.Text) > maxErrorText {
				want.Text = want.Text[:maxErrorText]
			}
			if *le != *want {
				t.Errorf("got  %+v\nwant %+v", *le, *want)
			}
			if r.Line() != 3 {
				t.Errorf("Line: got %d, want 3", r.Line())
			}
			// The reader goes on with the next line.
			if err := r.Next(&f); err != nil || f.ID != 2 {
				t.Errorf("after the error: got ID %X and %v, want ID 002 and nil", f.ID, err)
			}
		})
	}
}

func TestLineErrorText(t *testing.T) {
	r := NewReader(strings.NewReader("(1.000000) can0 123#DEADBEEG\n"), Options{})
	var f frame.Frame
	err := r.Next(&f)
	want := `capture: line 1: column 28: invalid hex digit 'G' in the data: "(1.000000) can0 123#DEADBEEG"`
	if err == nil || err.Error() != want {
		t.Errorf("got %v, want %s", err, want)
	}
}

func TestReaderLongLine(t *testing.T) {
	long := "(1.0) can0 123#" + strings.Repeat("0", MaxLineLen+10)
	in := "(1.0) can0 001#\n" + long + "\n(1.0) can0 003#\n" + long
	var f frame.Frame

	r := NewReader(strings.NewReader(in), Options{})
	if err := r.Next(&f); err != nil {
		t.Fatal(err)
	}
	err := r.Next(&f)
	var le *LineError
	if !errors.As(err, &le) || le.Line != 2 || le.Msg != "line longer than 65536 bytes" || le.Text != long[:maxErrorText] {
		t.Fatalf("got %#v, want a LineError for line 2 saying it is too long", err)
	}
	if err := r.Next(&f); err != nil || f.ID != 3 || r.Line() != 3 {
		t.Errorf("after the long line: got ID %X line %d err %v, want ID 003 line 3 nil", f.ID, r.Line(), err)
	}
	if err := r.Next(&f); !errors.As(err, &le) || le.Line != 4 {
		t.Errorf("long last line without newline: got %v, want a LineError for line 4", err)
	}
	if err := r.Next(&f); err != io.EOF {
		t.Errorf("at the end: got %v, want io.EOF", err)
	}

	r = NewReader(strings.NewReader(in), Options{SkipInvalid: true})
	var ids []uint32
	for r.Next(&f) == nil {
		ids = append(ids, f.ID)
	}
	if len(ids) != 2 || ids[0] != 1 || ids[1] != 3 || r.Skipped() != 2 {
		t.Errorf("skipping: got IDs %X and %d skipped, want [1 3] and 2", ids, r.Skipped())
	}
}

func TestReaderSkipInvalid(t *testing.T) {
	in := "(1.0) can0 001#\n" +
		"garbage\n" +
		"\n" +
		"  \t\n" +
		"(1.0) can0 002#0\n" +
		"(1.0) can0 003#\r\n" +
		"(1.0) can0 004#" // no final newline
	r := NewReader(strings.NewReader(in), Options{SkipInvalid: true})
	var f frame.Frame
	var got []uint32
	var lines []int
	for {
		err := r.Next(&f)
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("got %v, want only frames and io.EOF", err)
		}
		got = append(got, f.ID)
		lines = append(lines, r.Line())
	}
	if want := []uint32{1, 3, 4}; !equal(got, want) {
		t.Errorf("IDs: got %X, want %X", got, want)
	}
	if want := []int{1, 6, 7}; !equal(lines, want) {
		t.Errorf("lines: got %d, want %d", lines, want)
	}
	if r.Skipped() != 2 {
		t.Errorf("Skipped: got %d, want 2 (blank lines are not counted)", r.Skipped())
	}
}

func equal[T comparable](a, b []T) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func TestReaderBuses(t *testing.T) {
	in := []string{"slcan0", "can1", "can255", "vcan0", "elm", "can0", "can128", "can01", "can1", "elm"}
	want := []uint8{255, 1, 254, 0, 253, 252, 128, 251, 1, 253}
	var b strings.Builder
	for _, name := range in {
		b.WriteString("(1.0) " + name + " 123#\n")
	}
	r := NewReader(strings.NewReader(b.String()), Options{})
	var f frame.Frame
	for i, name := range in {
		if err := r.Next(&f); err != nil {
			t.Fatal(err)
		}
		if f.Bus != want[i] {
			t.Errorf("%s: got bus %d, want %d", name, f.Bus, want[i])
		}
		if got := r.Interface(f.Bus); got != name {
			t.Errorf("Interface(%d): got %q, want %q", f.Bus, got, name)
		}
	}
	if got := r.Interface(7); got != "" {
		t.Errorf("Interface of an unseen bus: got %q, want \"\"", got)
	}
}

func TestReaderTooManyInterfaces(t *testing.T) {
	var b strings.Builder
	for i := range 257 {
		b.WriteString("(1.0) if" + strings.Repeat("x", i%7) + string(rune('a'+i%26)) + string(rune('a'+i/26)) + " 123#\n")
	}
	r := NewReader(strings.NewReader(b.String()), Options{})
	var f frame.Frame
	for i := range 256 {
		if err := r.Next(&f); err != nil {
			t.Fatalf("line %d: %v", i+1, err)
		}
	}
	err := r.Next(&f)
	var le *LineError
	if !errors.As(err, &le) || le.Msg != "column 7: more than 256 interfaces" {
		t.Errorf("257th interface: got %v, want a LineError saying more than 256 interfaces", err)
	}
}

func TestReaderReadError(t *testing.T) {
	boom := errors.New("boom")
	r := NewReader(io.MultiReader(strings.NewReader("(1.0) can0 123#\n"), iotest.ErrReader(boom)), Options{})
	var f frame.Frame
	if err := r.Next(&f); err != nil {
		t.Fatal(err)
	}
	if err := r.Next(&f); !errors.Is(err, boom) {
		t.Errorf("got %v, want the reader's error", err)
	}
}

// cycle repeats its data forever, for steady-state measurements.
type cycle struct {
	data []byte
	off  int
}

func (c *cycle) Read(p []byte) (int, error) {
	n := copy(p, c.data[c.off:])
	c.off = (c.off + n) % len(c.data)
	return n, nil
}

// generated returns a capture of n varied frames on two buses.
func generated(n int) []byte {
	var buf bytes.Buffer
	w := NewWriter(&buf)
	for i := range n {
		f := mk(1696868256000000000+int64(i)*137000, uint32(0x100+i%0x500), 0, 0, seq(i%9)...)
		iface := "can0"
		if i%3 == 0 {
			f.ID, f.Flags, iface = 0x18FEF100+uint32(i%200), frame.Extended, "can1"
		}
		if err := w.Write(&f, iface); err != nil {
			panic(err)
		}
	}
	if err := w.Flush(); err != nil {
		panic(err)
	}
	return buf.Bytes()
}

func TestReaderAllocs(t *testing.T) {
	r := NewReader(&cycle{data: generated(1000)}, Options{})
	var f frame.Frame
	for range 2000 { // learn the interfaces, fill the buffer
		if err := r.Next(&f); err != nil {
			t.Fatal(err)
		}
	}
	if got := testing.AllocsPerRun(10000, func() { _ = r.Next(&f) }); got != 0 {
		t.Errorf("got %v allocs per line, want 0", got)
	}
	bad := NewReader(&cycle{data: []byte("(1.0) can0 123#\n(1.0) can0 12G#\n")}, Options{SkipInvalid: true})
	_ = bad.Next(&f)
	if got := testing.AllocsPerRun(1000, func() { _ = bad.Next(&f) }); got != 0 {
		t.Errorf("skipping invalid lines: got %v allocs per frame, want 0", got)
	}
}

func BenchmarkRead(b *testing.B) {
	benchmarkRead(b, generated(10000))
}

func benchmarkRead(b *testing.B, data []byte) {
	r := NewReader(&cycle{data: data}, Options{})
	var f frame.Frame
	b.ReportAllocs()
	b.SetBytes(int64(len(data)) / int64(bytes.Count(data, []byte{'\n'})))
	for b.Loop() {
		if err := r.Next(&f); err != nil {
			b.Fatal(err)
		}
	}
}

var _ io.Reader = (*cycle)(nil)
