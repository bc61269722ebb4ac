package capture

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"
)

func openASC(r io.Reader, o Options) Source { return NewASCReader(r, o) }

// ascHead is a header whose date is 1506783973.191 (UTC).
const ascHead = "date Sat Sep 30 15:06:13.191 2017\nbase hex  timestamps absolute\ninternal events logged\n"

func TestASCRead(t *testing.T) {
	fd8 := " 1 0 8  8 01 02 03 04 05 06 07 08   102203  133   303000 e0006659 46500250 4b140250 20011736 2001040d"
	runTextCases(t, openASC, []textCase{
		{name: "classic 11-bit and 29-bit",
			in: ascHead + "   1.000000 1  123             Rx   d 2 AB cd  Length = 240015 BitCount = 124 ID = 291\n" +
				"   2.5 2  1ABx Tx d 0\n",
			want: []string{"(1506783974.191000) can0 123#ABCD", "(1506783975.691000) can1 000001AB#"}},
		{name: "decimal base",
			in:   "base dec timestamps absolute\n 0.5 1 291 Rx d 2 1 255\n 0.6 3 291x Rx d 1 10\n 0.7 CANFD 1 Rx 2047 0 0 9 12 1 2 3 4 5 6 7 8 9 10 11 12 0 0\n",
			want: []string{"(0.500000) can0 123#01FF", "(0.600000) can2 00000123#0A", "(0.700000) can0 7FF##00102030405060708090A0B0C"}},
		{name: "relative timestamps count from the previous event",
			in: "date Sat Sep 30 15:06:13.191 2017\nbase hex timestamps relative\n" +
				" 0.5 1 1 Rx d 0\n 0.25 1  Statistic: D 0 R 0 XD 0 XR 0 E 0 O 0 B 0.00%\n 0.25 1 2 Rx d 0\n" +
				"Begin Triggerblock Sat Sep 30 16:00:00 2017\n 0.000001 1 3 Rx d 0\n 0.000001 1 4 Rx d 0\n",
			want: []string{"(1506783973.691000) can0 001#", "(1506783974.191000) can0 002#",
				"(1506787200.000001) can0 003#", "(1506787200.000002) can0 004#"}},
		{name: "the trigger block's time replaces the date's",
			in:   "date Sam Sep 30 15:06:13.191 2017\nbase hex timestamps absolute\nBegin Triggerblock Sat Sep 30 10:06:13.191 PM 2017\n 2.5010 2 C8 Tx d 1 09\nEnd TriggerBlock\n",
			want: []string{"(1506809175.692000) can1 0C8#09"}},
		{name: "no date: times from 0",
			in:   "base hex timestamps absolute\n 2.000001 1 1 Rx d 0\n",
			want: []string{"(2.000001) can0 001#"}},
		{name: "nanoseconds are kept",
			in:   ascHead + " 0.123456789 1 1 Rx d 0\n",
			want: []string{"(1506783973.314456789) can0 001#"}},
		{name: "remote frames with and without DLC",
			in:   ascHead + " 1.0 1 100 Rx r\n 1.0 2 100 Tx R 8 Length = 1704000 BitCount = 145\n 1.0 1 100x Rx r Length = 2\n",
			want: []string{"(1506783974.191000) can0 100#R", "(1506783974.191000) can1 100#R8", "(1506783974.191000) can0 00000100#R"}},
		{name: "error frames",
			in: ascHead + " 1.0 2 ErrorFrame\n 1.0 1 ErrorFrame ECC: 10100010\n" +
				" 1.0 CANFD   5 Tx ErrorFrame Not Acknowledge error, dominant error flag fffe c7 31ca Arb. 556 44 0 0 f 64 00\n",
			want: []string{"(1506783974.191000000) can1 ERROR", "(1506783974.191000000) can0 ERROR", "(1506783974.191000000) can4 ERROR"}},
		{name: "CAN FD: BRS, ESI, symbolic name, 29-bit",
			in: ascHead + " 1.0 CANFD   1 Rx        300" + fd8 + "\n" +
				" 1.0 CANFD   2 Tx        1C4D80A7x   0 1 8  8 12 c2 03 04 05 06 07 08   102203\n" +
				" 1.0 CANFD   3 Rx        30a  Generic_Name_12  1 1 9 12 01 02 03 04 05 06 07 08 09 0A 0B 0C 1331984\n",
			want: []string{"(1506783974.191000) can0 300##10102030405060708", "(1506783974.191000) can1 1C4D80A7##212C2030405060708",
				"(1506783974.191000) can2 30A##30102030405060708090A0B0C"}},
		{name: "a CANFD line without data is a remote frame",
			in:   ascHead + "  30.300981 CANFD   3 Tx     50005x                                0 1 5 0 140000 73 200050 7a60\n",
			want: []string{"(1506784003.491981) can2 00050005#R5"}},
		{name: "a classic DLC over 8 keeps 8 bytes",
			in: ascHead + " 1.0 1  3FF Tx d D 55 AA 01 02 03 04 05 06  Length = 232016\n" +
				" 1.0 1  123x Rx d 40 00 01 02 03 04 05 06 07 08 09 0A 0B 0C 0D 0E 0F 10 11\n",
			want: []string{"(1506783974.191000) can0 3FF#55AA010203040506", "(1506783974.191000) can0 00000123#0001020304050607"}},
		{name: "events that are no frame are skipped",
			in: ascHead + "// version 9.0.0\nBegin Triggerblock Sat Sep 30 15:06:13.191 2017\n" +
				"   0.000000 Start of measurement\n   0.015991 CAN 1 Status:chip status error passive - TxErr: 132 RxErr: 0\n" +
				"   1.015991 1  Statistic: D 0 R 0 XD 0 XR 0 E 0 O 0 B 0.00%\n" +
				"   3.297743 1  J1939TP FEE3p        6    0  0   -   Rx   d 23 A0 0F A6 60 3B D1 40 1F DE 80 25 DF C0 2B\n" +
				"   4.0 1  123 TxRq d 0\n   4.0 CANFD 1 TxRq 123 0 0 0 0\n   5.0 Li1 ...\nEnd TriggerBlock\n" +
				"no internal events logged\n\n   \n",
			want: nil},
		{name: "byte order mark and CRLF",
			in:   "\xEF\xBB\xBFdate Sat Sep 30 15:06:13.191 2017\r\nbase hex\r\n 1.0 1 123 Rx d 1 01\r\n",
			want: []string{"(1506783974.191000) can0 123#01"}},

		{name: "bad ID", in: ascHead + " 1.0 1 12G Rx d 0\n", err: "line 4: column 8: want a CAN ID"},
		{name: "11-bit ID over 7FF", in: ascHead + " 1.0 1 800 Rx d 0\n", err: "line 4: column 8: 11-bit CAN ID over 7FF"},
		{name: "29-bit ID over 1FFFFFFF", in: ascHead + " 1.0 1 20000000x Rx d 0\n", err: "line 4: column 8: 29-bit"},
		{name: "fewer data bytes than the DLC",
			in:   ascHead + " 1.0 1 123 Rx d 1 01\n 1.0 1 123 Rx d 8 01 02\n",
			want: []string{"(1506783974.191000) can0 123#01"},
			err:  "line 5: column 24: fewer data bytes"},
		{name: "a bad data byte", in: ascHead + " 1.0 1 123 Rx d 2 01 1G\n", err: "line 4: column 22: want a data byte"},
		{name: "channel 0", in: ascHead + " 1.0 0 123 Rx d 0\n", err: "line 4: column 6: want a channel from 1 to 256"},
		{name: "channel 257", in: ascHead + " 1.0 257 ErrorFrame\n", err: "line 4: column 6: want a channel"},
		{name: "neither d nor r", in: ascHead + " 1.0 1 123 Rx x 0\n", err: "line 4: column 15: want \"d\""},
		{name: "remote DLC over 8", in: ascHead + " 1.0 1 123 Rx r 9\n", err: "line 4: column 17: remote frame DLC over 8"},
		{name: "time with 10 digits of seconds", in: ascHead + " 1234567890.0 1 123 Rx d 0\n", err: "line 4: column 2: want the time"},
		{name: "time not a number", in: ascHead + " 1.0.0 1 123 Rx d 0\n", err: "line 4: column 2: want the time"},
		{name: "unknown month", in: "date Sat Foo 30 15:06:13 2017\n", err: "line 1: column 10: unknown month name"},
		{name: "no such day", in: "date Sat Feb 30 15:06:13 2017\n", err: "line 1: column 5: no such day"},
		{name: "hour 24", in: "date Sat Sep 30 24:06:13 2017\n", err: "line 1: column 17: time of day out of range"},
		{name: "text after the year", in: "date Sat Sep 30 15:06:13 2017 UTC\n", err: "line 1: column 31: unexpected text"},
		{name: "bad trigger block date", in: "Begin Triggerblock Sat Sep 30 15:06 2017\n", err: "line 1: column 36: want a time of day"},
		{name: "bad base", in: "base oct\n", err: "line 1: column 6: want \"hex\" or \"dec\""},
		{name: "bad timestamps", in: "base hex timestamps sideways\n", err: "line 1: column 21: want \"absolute\""},
		{name: "CAN FD BRS 2", in: ascHead + " 1.0 CANFD 1 Rx 123 2 0 8 8 01 02 03 04 05 06 07 08\n", err: "line 4: column 21: want BRS 0 or 1"},
		{name: "CAN FD ESI x", in: ascHead + " 1.0 CANFD 1 Rx 123 Name 1 x 8 8 01 02 03 04 05 06 07 08\n", err: "line 4: column 28: want ESI"},
		{name: "CAN FD length 10", in: ascHead + " 1.0 CANFD 1 Rx 123 1 0 9 10 01\n", err: "line 4: column 27: want a CAN FD data length"},
		{name: "CAN FD direction", in: ascHead + " 1.0 CANFD 1 123 1 0 8 8\n", err: "line 4: column 14: want \"Rx\" or \"Tx\""},
		{name: "CAN FD remote DLC over 8", in: ascHead + " 1.0 CANFD 1 Rx 123 0 0 f 0\n", err: "line 4: column 27: remote frame DLC over 8"},
	})
}

func TestASCDate(t *testing.T) {
	utc := func(y int, mo time.Month, d, h, mi, s, ns int) int64 {
		return time.Date(y, mo, d, h, mi, s, ns, time.UTC).UnixNano()
	}
	tests := []struct {
		in   string
		want int64
	}{
		{"Sat Sep 30 15:06:13.191 2017", utc(2017, 9, 30, 15, 6, 13, 191e6)},
		{"Sam Sep 30 15:06:13.191 2017", utc(2017, 9, 30, 15, 6, 13, 191e6)},
		{"Sat Sep 30 10:06:13.191 PM 2017", utc(2017, 9, 30, 22, 6, 13, 191e6)},
		{"Thu Apr 28 10:44:52.480 am 2022", utc(2022, 4, 28, 10, 44, 52, 480e6)},
		{"Tue May 27 04:09:35.000 pm 2014", utc(2014, 5, 27, 16, 9, 35, 0)},
		{"Tue May 27 04:09:35 Pm 2014", utc(2014, 5, 27, 16, 9, 35, 0)},
		{"Mon Jan 1 12:00:00 am 2024", utc(2024, 1, 1, 0, 0, 0, 0)},
		{"Mon Jan 1 12:30:00 pm 2024", utc(2024, 1, 1, 12, 30, 0, 0)},
		{"Mon Jan 1 15:30:00 pm 2024", utc(2024, 1, 1, 15, 30, 0, 0)},
		{"Mon Jan 1 00:30:00 2024", utc(2024, 1, 1, 0, 30, 0, 0)},
		{"Mo M\xc3\xa4r 6 9:05:07 2023", utc(2023, 3, 6, 9, 5, 7, 0)},
		{"Mo M\xe4r 6 9:05:07 2023", utc(2023, 3, 6, 9, 5, 7, 0)},
		{"Mo Mrz 6 9:05:07 2023", utc(2023, 3, 6, 9, 5, 7, 0)},
		{"Mi Mai 3 09:05:07.5 2023", utc(2023, 5, 3, 9, 5, 7, 5e8)},
		{"Di OKT 3 09:05:07.123456 2023", utc(2023, 10, 3, 9, 5, 7, 123456000)},
		{"So Dez 24 23:59:59.999999999 2023", utc(2023, 12, 24, 23, 59, 59, 999999999)},
		{"Wed December 24 23:59:59 2025", utc(2025, 12, 24, 23, 59, 59, 0)},
		{"Thu Feb 29 01:02:03 2024", utc(2024, 2, 29, 1, 2, 3, 0)},
	}
	for _, tt := range tests {
		got, col, msg := parseASCDate([]byte(tt.in), 0)
		if msg != "" || got != tt.want {
			t.Errorf("%q: got %d (column %d: %s), want %d", tt.in, got, col, msg, tt.want)
		}
	}
}

func TestASCSkipInvalid(t *testing.T) {
	in := ascHead + " 1.0 1 123 Rx d 1 01\n 1.0 1 12G Rx d 0\n 1.0 0 123 Rx d 0\n" + strings.Repeat("7", MaxLineLen+10) +
		"\n 2.0 1 124 Rx d 1 02\n 3.0 1 125 Rx d 8 01\n"
	r := NewASCReader(strings.NewReader(in), Options{SkipInvalid: true})
	got, err := render(r)
	want := []string{"(1506783974.191000) can0 123#01", "(1506783975.191000) can0 124#02"}
	if err != nil || strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("got %q, %v, want %q", got, err, want)
	}
	if r.Skipped() != 4 {
		t.Errorf("got %d skipped, want 4", r.Skipped())
	}
	if r.Line() != 9 {
		t.Errorf("got line %d, want 9", r.Line())
	}
}

func TestASCLongLine(t *testing.T) {
	in := ascHead + strings.Repeat(" ", MaxLineLen+1) + "\n 1.0 1 123 Rx d 0\n"
	r := NewASCReader(strings.NewReader(in), Options{})
	_, err := render(r)
	var le *LineError
	if !errors.As(err, &le) || le.Line != 4 || !strings.Contains(le.Msg, "longer than") {
		t.Fatalf("got %v, want a *LineError for line 4 being too long", err)
	}
	got, err := render(r) // and on with the next line
	if err != nil || len(got) != 1 {
		t.Errorf("after the long line: got %q, %v, want one frame", got, err)
	}
}

// TestASCTruncated cuts a capture in the middle of a frame's line: the
// frames before it, then an error for the cut line.
func TestASCTruncated(t *testing.T) {
	in := ascHead + " 3.098426 1  18EBFF00x       Rx d 8 01 A0 0F A6 60 3B D1 40    Length = 273910\n" +
		" 3.148421 1  18EBFF00x       Rx d 8 02 1F DE 80"
	got, err := render(NewASCReader(strings.NewReader(in), Options{}))
	var le *LineError
	if len(got) != 1 || !errors.As(err, &le) || le.Line != 5 {
		t.Errorf("got %q, %v, want one frame and a *LineError for line 5", got, err)
	}
}

func TestASCInterface(t *testing.T) {
	r := NewASCReader(strings.NewReader(ascHead+" 1.0 3 123 Rx d 0\n 1.0 256 123 Rx d 0\n"), Options{})
	if _, err := render(r); err != nil {
		t.Fatal(err)
	}
	for bus, want := range map[uint8]string{0: "", 1: "", 2: "can2", 255: "can255"} {
		if got := r.Interface(bus); got != want {
			t.Errorf("Interface(%d): got %q, want %q", bus, got, want)
		}
	}
}

// ascBody returns n lines of frames as CANoe logs them: mostly classic
// frames of 11 and 29 bits, some CAN FD.
func ascBody(n int) []byte {
	var b bytes.Buffer
	for i := range n {
		t := float64(i) * 0.000137
		switch {
		case i%10 == 9:
			fmt.Fprintf(&b, "%11.6f CANFD   2 Rx        %X                                   1 0 a 16 ", t, 0x200+i%0x100)
			for k := range 16 {
				fmt.Fprintf(&b, "%02X ", (i+k)&0xFF)
			}
			b.WriteString("  102203  133   303000 e0006659 46500250 4b140250 20011736 2001040d\n")
		case i%3 == 0:
			fmt.Fprintf(&b, "%11.6f 1  %Xx       Rx   d 8 %02X A0 0F A6 60 3B D1 40  Length = 273910 BitCount = 141 ID = 418119424x\n", t, 0x18EBFF00+i%200, i&0xFF)
		default:
			n := i % 9
			fmt.Fprintf(&b, "%11.6f 1  %-15X Rx   d %d", t, 0x100+i%0x500, n)
			for k := range n {
				fmt.Fprintf(&b, " %02X", (i*7+k)&0xFF)
			}
			b.WriteString("  Length = 240015 BitCount = 124 ID = 1785\n")
		}
	}
	return b.Bytes()
}

func TestASCAllocs(t *testing.T) {
	allocsText(t, NewASCReader(&textCycle{head: []byte(ascHead), body: ascBody(1000)}, Options{}))
	bad := []byte(" 1.0 1 123 Rx d 1 01\n 1.0 1 12G Rx d 0\n 1.0 1 123 Rx d 8 01\n")
	allocsText(t, NewASCReader(&textCycle{head: []byte(ascHead), body: bad}, Options{SkipInvalid: true}))
}

func BenchmarkReadASC(b *testing.B) {
	body := ascBody(10000)
	benchText(b, NewASCReader(&textCycle{head: []byte(ascHead), body: body}, Options{}), len(body)/10000)
}

// FuzzASC feeds arbitrary input to an ASCReader (see fuzzText).
func FuzzASC(f *testing.F) {
	for _, b := range realHeads(".asc") {
		f.Add(b)
	}
	for _, s := range []string{
		ascHead + " 1.0 1 123 Rx d 2 01 02\n 1.0 2 ErrorFrame\n 1.0 1 100 Rx r 8\n",
		"base dec timestamps relative\n 0.5 1 291x Rx d 1 255\n 0.5 CANFD 1 Rx 2047 Name 1 1 9 12 1 2 3 4 5 6 7 8 9 10 11 12\n",
		"\xEF\xBB\xBFdate Do M\xc3\xa4r 6 12:05:07 am 2023\r\nBegin Triggerblock Sa Okt 1 1:2:3.4 PM 2022\r\n 9.9 CANFD 3 Tx 50005x 0 1 5 0 1\r\n",
		ascHead + " 1.0 1 3FF Tx d D 55 AA 01 02 03 04 05 06\n 1.0 CANFD 4 Rx 4EE 0 0 f 64 " + strings.Repeat("00 ", 64) + "\n",
		" 999999999.999999999 256 1FFFFFFFx Rx d 0\ndate x Dec 31 23:59:59.999999999 2261\n 999999999.9 1 1 Rx d 0\n",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		fuzzText(t, in, openASC)
		detectASC(in)
		detectTRC(in)
	})
}
