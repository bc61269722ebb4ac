package capture

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"
)

func openTRC(r io.Reader, o Options) Source { return NewTRCReader(r, o) }

// $STARTTIME=25569 is the Unix epoch: a frame's time is its offset.
const (
	trc11Head = ";$FILEVERSION=1.1\n;$STARTTIME=25569\n;\n;   Message Number\n"
	trc20Head = ";$FILEVERSION=2.0\n;$STARTTIME=25569\n;$COLUMNS=N,O,T,I,d,l,D\n"
	trc21Head = ";$FILEVERSION=2.1\n;$STARTTIME=25569\n;$COLUMNS=N,O,T,B,I,d,R,L,D\n"
)

func TestTRCRead(t *testing.T) {
	runTextCases(t, openTRC, []textCase{
		{name: "1.1",
			in: trc11Head + "     1)      1059.9  Rx         0300  7  00 00 00 00 04 00 00 \n" +
				"     5)      1346.8  Warng  FFFFFFFF  4  00 00 00 04  BUSLIGHT \n" +
				"     6)      1349.2  Error      0008  4  00 19 08 08 \n" +
				"     7)      1352.7  Rx         0100  3  RTR \n" +
				"     8)         1.5  Tx     18EFC034  8  01 02 03 04 05 06 07 08\n" +
				"     9)         1.6  Tx     00000123  0\n",
			want: []string{"(1.059900) can0 300#00000000040000", "(1.349200000) can0 ERROR", "(1.352700) can0 100#R3",
				"(0.001500) can0 18EFC034#0102030405060708", "(0.001600) can0 00000123#"}},
		{name: "1.0: no version line, no start time",
			in: ";##########\n;    Start time: 11.09.2002 16:00:20.682\n" +
				"     1)      1841      0001  8  00 00 00 00 00 00 00 00  \n" +
				"     2)      1842      0008  4  ERROR 00 19 08 08 \n" +
				"     3)      1843  FFFFFFFF  4  00 00 00 04 -- -- -- --  BUSLIGHT \n" +
				"     4)      1844      0100  3  RTR \n",
			want: []string{"(1.841000) can0 001#0000000000000000", "(1.842000000) can0 ERROR", "(1.844000) can0 100#R3"}},
		{name: "1.2: a bus column; the start time may end in a semicolon",
			in: ";$FILEVERSION=1.2\n;$STARTTIME=25569.5;\n" +
				"     1)      1059.900  2  Rx         0300  7  00 00 00 00 04 00 00  \n" +
				"     5)      1346.834  1  Warng  FFFFFFFF  4  00 00 00 04  BUSLIGHT \n" +
				"     6)      1349.222  1  Error      0008  4  00 19 08 08 \n",
			want: []string{"(43201.059900) can1 300#00000000040000", "(43201.349222000) can0 ERROR"}},
		{name: "1.3: bus and reserved columns",
			in: ";$FILEVERSION=1.3\n;$STARTTIME=25569\n" +
				"     1)      1059.900 3  Rx        0300 -  7    00 00 00 00 04 00 00  \n" +
				"     5)      1346.834 1  Warng FFFFFFFF -  4    00 00 00 04  BUSLIGHT \n" +
				"     7)      1352.743 1  Rx        0100 -  3    RTR \n",
			want: []string{"(1.059900) can2 300#00000000040000", "(1.352743) can0 100#R3"}},
		{name: "2.0: data length column, CAN FD, error, status, error counter, remote",
			in: trc20Head +
				"      1      1059.900 DT     0300 Rx 7  00 00 00 00 04 00 00  \n" +
				"      5      1334.416 FD     0500 Tx 12 01 02 03 04 05 06 07 08 09 0A 0B 0C \n" +
				"      6      1334.522 ER          Rx    04 00 02 00 00 \n" +
				"      7      1334.531 ST          Rx    00 00 00 08 \n" +
				"      8      1334.643 EC          Rx    02 02 \n" +
				"      9      1335.156 DT 18EFC034 Tx 8  01 02 03 04 05 06 07 08 \n" +
				"     10      1336.543 RR     0100 Rx 3 \n",
			want: []string{"(1.059900) can0 300#00000000040000", "(1.334416) can0 500##00102030405060708090A0B0C",
				"(1.334522000) can0 ERROR", "(1.335156) can0 18EFC034#0102030405060708", "(1.336543) can0 100#R3"}},
		{name: "2.1: bus and DLC columns, BRS and ESI, events",
			in: trc21Head +
				"      1      1059.900 DT 1      0300 Rx -  7    00 00 00 00 04 00 00  \n" +
				"      5      1334.416 FD 2      0500 Tx -  9    01 02 03 04 05 06 07 08 09 0A 0B 0C \n" +
				"      6      1334.222 ER 3         - Rx -  5    04 00 02 00 00 \n" +
				"      7      1334.224 EV 1  User-defined event for bus 1 \n" +
				"      8      1334.225 EV -  User-defined event for all busses \n" +
				"      9      1334.231 ST 1         - Rx -  4    00 00 00 08 \n" +
				"     11      1334.643 EC 1         - Rx -  2    02 02 \n" +
				"     12      1335.156 FB 1  18EFC034 Tx -  1    01 \n" +
				"     13      1335.157 FE 1  18EFC034 Tx -  1    02 \n" +
				"     14      1335.158 BI 1  18EFC034 Tx -  2    03 04 \n" +
				"     15      1336.543 RR 1      0100 Rx -  3 \n" +
				"     16      1336.544 DT 1      0101 Rx -  F    01 02 03 04 05 06 07 08\n",
			want: []string{"(1.059900) can0 300#00000000040000", "(1.334416) can1 500##00102030405060708090A0B0C",
				"(1.334222000) can2 ERROR",
				"(1.335156) can0 18EFC034##101", "(1.335157) can0 18EFC034##202", "(1.335158) can0 18EFC034##30304",
				"(1.336543) can0 100#R3"},
			err: "line 15: column 44: want a DLC"},
		{name: "2.1: columns in another order",
			in:   ";$FILEVERSION=2.1\n;$COLUMNS=O,T,I,B,d,L,D\n 1.5 DT 0123 2 Rx 2 01 02\n",
			want: []string{"(0.001500) can1 123#0102"}},
		{name: "2.1: a classic DLC over 8 means 8 bytes",
			in:   trc21Head + "     16      1336.544 DT 1      0101 Rx -  12    01 02 03 04 05 06 07 08\n",
			want: []string{"(1.336544) can0 101#0102030405060708"}},
		{name: "1.1 without a start time: times from 0",
			in:   ";$FILEVERSION=1.1\n     1)      1059.9  Rx         0300  1  07\n",
			want: []string{"(1.059900) can0 300#07"}},
		{name: "header comments after the records are comments",
			in:   trc11Head + "     1)  1.0  Rx  0300  0\n;$FILEVERSION=3.0\n;$STARTTIME=x\n",
			want: []string{"(0.001000) can0 300#"}},
		{name: "CRLF, BOM and blank lines",
			in:   "\xEF\xBB\xBF;$FILEVERSION=1.1\r\n;$STARTTIME=25569\r\n\r\n     1)  1.0  Rx  0300  1  AB\r\n  \r\n",
			want: []string{"(0.001000) can0 300#AB"}},

		{name: "unsupported version", in: ";$FILEVERSION=3.0\n", err: "line 1: column 15: unsupported TRC version"},
		{name: "bad start time", in: ";$FILEVERSION=1.1\n;$STARTTIME=4.5.5\n", err: "line 2: column 13: want $STARTTIME"},
		{name: "start time beyond 2262", in: ";$STARTTIME=132320\n", err: "line 1: column 13: want $STARTTIME"},
		{name: "2.x without $COLUMNS", in: ";$FILEVERSION=2.0\n      1  1.0 DT 0100 Rx 0\n", err: "line 2: column 7: a version 2 trace needs a $COLUMNS"},
		{name: "$COLUMNS without D", in: ";$FILEVERSION=2.1\n;$COLUMNS=N,O,T,B,I,d,R,L\n", err: "line 2: column 11: $COLUMNS lacks"},
		{name: "$COLUMNS not ending in D", in: ";$COLUMNS=N,O,D,T,I,L\n", err: "line 1: column 11: $COLUMNS must end with D"},
		{name: "$COLUMNS with an empty column", in: ";$COLUMNS=N,,O\n", err: "line 1: column 13: want $COLUMNS as letters"},
		{name: "$COLUMNS naming a column twice", in: ";$COLUMNS=N,O,O,D\n", err: "line 1: column 15: a column named twice"},
		{name: "11-bit ID over 7FF", in: trc11Head + "     1)  1.0  Rx  0800  0\n", err: "line 5: column 19: 11-bit ID over 7FF"},
		{name: "29-bit ID over 1FFFFFFF", in: trc11Head + "     1)  1.0  Rx  20000000  0\n", err: "line 5: column 19: 29-bit ID"},
		{name: "ID not hex", in: trc11Head + "     1)  1.0  Rx  01G0  0\n", err: "line 5: column 19: want the ID in hex"},
		{name: "length 9", in: trc11Head + "     1)  1.0  Rx  0100  9  00\n", err: "line 5: column 25: want a data length from 0 to 8"},
		{name: "fewer data bytes", in: trc11Head + "     1)  1.0  Rx  0100  2  00\n", err: "line 5: column 30: fewer data bytes"},
		{name: "more data bytes", in: trc11Head + "     1)  1.0  Rx  0100  1  00 11\n", err: "line 5: column 31: more data than the length says"},
		{name: "bad data byte", in: trc11Head + "     1)  1.0  Rx  0100  1  0x\n", err: "line 5: column 28: want a data byte in hex"},
		{name: "no message number", in: trc11Head + "     1  1.0  Rx  0100  0\n", err: "line 5: column 6: want the message number"},
		{name: "bad offset", in: trc11Head + "     1)  1,0  Rx  0100  0\n", err: "line 5: column 10: want the time offset"},
		{name: "bad type", in: trc11Head + "     1)  1.0  R#  0100  0\n", err: "line 5: column 15: want the message type"},
		{name: "bus 0", in: ";$FILEVERSION=1.3\n     1)  1.0 0  Rx  0100 -  0\n", err: "line 2: column 14: want a bus from 1 to 256"},
		{name: "2.x bus 257", in: trc21Head + "  1  1.0 DT 257  0100 Rx -  0\n", err: "line 4: column 13: want a bus"},
		{name: "2.x unknown type", in: trc21Head + "  1  1.0 D1 1  0100 Rx -  0\n", err: "line 4: column 10: want the message type"},
		{name: "2.0 classic frame of 12 bytes", in: trc20Head + "  1  1.0 DT 0100 Rx 12 00\n", err: "line 4: column 21: classic frame longer than 8 bytes"},
		{name: "2.0 CAN FD length 13", in: trc20Head + "  1  1.0 FD 0100 Rx 13 00\n", err: "line 4: column 21: want a data length"},
		{name: "2.x remote frame with data", in: trc21Head + "  1  1.0 RR 1 0100 Rx - 1 00\n", err: "line 4: column 27: more data"},
		{name: "2.x no message number", in: trc21Head + "  x  1.0 DT 1 0100 Rx - 0\n", err: "line 4: column 3: want the message number"},
	})
}

func TestTRCHeaderErrorSticks(t *testing.T) {
	r := NewTRCReader(strings.NewReader(";$FILEVERSION=9.9\n     1)  1.0  Rx  0100  0\n"), Options{SkipInvalid: true})
	for range 2 {
		_, err := render(r)
		var le *LineError
		if !errors.As(err, &le) || le.Line != 1 {
			t.Errorf("got %v, want the header's *LineError again", err)
		}
	}
}

func TestOLEDate(t *testing.T) {
	tests := []struct {
		in   string
		want int64
		ok   bool
	}{
		{"25569", 0, true},
		{"25569.5", 43200e9, true},
		{"25569.0000000001", 8640, true}, // 1e-10 day is 8.64 µs
		{"25569.00000000000000000001", 0, true},
		{"25569.00000000000001", 1, true}, // 0.864 ns, rounded up
		{"25569.000000000006", 518, true}, // 518.4 ns
		{"45790.8017346065", 1747163669870001600, true},
		{"44548.6028595139", 1639837687062000960, true},
		{"43008.920986006946", 1506809173191000134, true},
		{"0", -25569 * 86400e9, true},
		{"132319.9999999999", 106750*86400e9 + 86399999991360, true},
		{"132320", 0, false},
		{"", 0, false},
		{"25569.", 0, false},
		{".5", 0, false},
		{"1.5.5", 0, false},
		{"-1", 0, false},
		{"1e5", 0, false},
	}
	for _, tt := range tests {
		got, ok := oleDate([]byte(tt.in))
		if got != tt.want || ok != tt.ok {
			t.Errorf("oleDate(%q): got %d, %v, want %d, %v", tt.in, got, ok, tt.want, tt.ok)
		}
	}
}

func TestTRCSkipInvalid(t *testing.T) {
	in := trc11Head + "     1)  1.0  Rx  0100  1  01\n     2)  1.0  Rx  0800  0\n" + strings.Repeat("1", MaxLineLen+1) +
		"\n     3)  2.0  Rx  0101  0\n     4)  2.0  Rx  0101  1\n"
	r := NewTRCReader(strings.NewReader(in), Options{SkipInvalid: true})
	got, err := render(r)
	want := []string{"(0.001000) can0 100#01", "(0.002000) can0 101#"}
	if err != nil || strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("got %q, %v, want %q", got, err, want)
	}
	if r.Skipped() != 3 {
		t.Errorf("got %d skipped, want 3", r.Skipped())
	}
}

// TestTRCTruncated cuts a trace in the middle of a record: the frames
// before it, then an error for the cut line.
func TestTRCTruncated(t *testing.T) {
	in := trc11Head + "     1)         2.5  Rx         018E  3  00 00 5C \n     2)         3.5  Rx         0164  8  04 00 00 5F"
	got, err := render(NewTRCReader(strings.NewReader(in), Options{}))
	var le *LineError
	if len(got) != 1 || !errors.As(err, &le) || le.Line != 6 {
		t.Errorf("got %q, %v, want one frame and a *LineError for line 6", got, err)
	}
}

// trc11Body returns n records as PCAN-View writes version 1.1.
func trc11Body(n int) []byte {
	var b bytes.Buffer
	for i := range n {
		id := fmt.Sprintf("    %04X", 0x100+i%0x500)
		if i%3 == 0 {
			id = fmt.Sprintf("%08X", 0x18FEF100+i%200)
		}
		l := i % 9
		fmt.Fprintf(&b, "%6d) %11.1f  Rx     %s  %d  ", i+1, float64(i)*0.3, id, l)
		for k := range l {
			fmt.Fprintf(&b, "%02X ", (i*7+k)&0xFF)
		}
		b.WriteByte('\n')
	}
	return b.Bytes()
}

// trc21Body returns n records of version 2.1, some CAN FD.
func trc21Body(n int) []byte {
	var b bytes.Buffer
	for i := range n {
		typ, id, dlc, l := "DT", fmt.Sprintf("    %04X", 0x100+i%0x500), i%9, i%9
		if i%3 == 0 {
			id = fmt.Sprintf("%08X", 0x18FEF100+i%200)
		}
		if i%10 == 9 {
			typ, dlc, l = "FB", 10, 16
		}
		fmt.Fprintf(&b, "%7d %13.3f %s %d  %s Rx -  %-2d   ", i+1, float64(i)*0.137, typ, 1+i%2, id, dlc)
		for k := range l {
			fmt.Fprintf(&b, " %02X", (i*7+k)&0xFF)
		}
		b.WriteByte('\n')
	}
	return b.Bytes()
}

func TestTRCAllocs(t *testing.T) {
	allocsText(t, NewTRCReader(&textCycle{head: []byte(trc11Head), body: trc11Body(1000)}, Options{}))
	allocsText(t, NewTRCReader(&textCycle{head: []byte(trc21Head), body: trc21Body(1000)}, Options{}))
	bad := []byte("     1)  1.0  Rx  0100  1  01\n     2)  1.0  Rx  0800  0\n     3)  1.0  Rx  0100  2  01\n")
	allocsText(t, NewTRCReader(&textCycle{head: []byte(trc11Head), body: bad}, Options{SkipInvalid: true}))
}

func BenchmarkReadTRC(b *testing.B) {
	b.Run("1.1", func(b *testing.B) {
		body := trc11Body(10000)
		benchText(b, NewTRCReader(&textCycle{head: []byte(trc11Head), body: body}, Options{}), len(body)/10000)
	})
	b.Run("2.1", func(b *testing.B) {
		body := trc21Body(10000)
		benchText(b, NewTRCReader(&textCycle{head: []byte(trc21Head), body: body}, Options{}), len(body)/10000)
	})
}

// FuzzTRC feeds arbitrary input to a TRCReader (see fuzzText).
func FuzzTRC(f *testing.F) {
	for _, b := range realHeads(".trc") {
		f.Add(b)
	}
	for _, s := range []string{
		trc11Head + "     1)  1.0  Rx  0100  1  01\n     6)      1349.2  Error      0008  4  00 19 08 08 \n     7)  2  Rx  0100  3  RTR\n",
		";\n     1)      1841      0001  8  00 00 00 00 00 00 00 00\n     2)      1842      0008  4  ERROR 00\n     3)      1843  FFFFFFFF  4  00\n",
		";$FILEVERSION=1.2\n;$STARTTIME=39878.6772258947;\n     1)      1059.900  2  Rx         0300  1  00\n",
		";$FILEVERSION=1.3\n;$STARTTIME=0.1\n     1)      1059.900 256  Rx        0300 -  0\n",
		trc20Head + "      5      1334.416 FD     0500 Tx 12 01 02 03 04 05 06 07 08 09 0A 0B 0C\n      6      1334.522 ER          Rx    04\n      7 1.0 RR 0100 Rx 3\n",
		trc21Head + "      5      1334.416 BI 2      0500 Tx -  9    01 02 03 04 05 06 07 08 09 0A 0B 0C\n      6      1334.222 ER 3         - Rx -  5    04 00 02 00 00\n      7  1.0 EV -  x\n",
		";$FILEVERSION=2.1\n;$STARTTIME=132319.9999999999\n;$COLUMNS=O,T,I,B,d,L,D\n 999999999999.999999 DT 1FFFFFFF 2 Rx 2 01 02\n",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		fuzzText(t, in, openTRC)
	})
}
