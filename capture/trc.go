package capture

import (
	"bytes"
	"io"
	"math/big"

	"github.com/yukart/candec/frame"
)

var _ Source = (*TRCReader)(nil)

// TRCReader reads frames from a PEAK trace (PCAN-View, PCAN-Explorer,
// PEAK-Converter) of version 1.0, 1.1, 1.2, 1.3, 2.0 or 2.1:
//
//	;$FILEVERSION=1.1
//	;$STARTTIME=45790.8017346065
//	     1)         2.5  Rx         018E  3  00 00 5C
//	     2)        17.3  Rx     18EFC034  8  01 02 03 04 05 06 07 08
//
//	;$FILEVERSION=2.1
//	;$STARTTIME=44548.6028595139
//	;$COLUMNS=N,O,T,B,I,d,R,L,D
//	      1     17535.400 DT 1  00000100 Tx -  8    00 00 00 00 00 00 00 00
//	      5      1334.416 FD 2      0500 Tx -  9    01 02 03 04 05 06 07 08 09 0A 0B 0C
//
// A frame's time is $STARTTIME (days since 1899-12-30, taken as UTC)
// plus the offset column in milliseconds, both converted to nanoseconds
// exactly; version 1.0 has no start time, so its times count from 0 (the
// Unix epoch). Bus c (the bus column of 1.2, 1.3 and of 2.x with a B
// column; 1 otherwise) is Bus c-1 ("can<c-1>"). An ID of more than 4
// hex digits is a 29-bit one. Bus status and other events are skipped;
// error frames come out with frame.Error set. See docs/capture-trc.md.
//
// It is not safe for concurrent use.
type TRCReader struct {
	textLines       // Interface, Skipped, Line
	header    bool  // no record read yet: ;$ lines still count
	version   int   // 10 × major + minor: 10, 11, 12, 13, 20, 21
	start     int64 // $STARTTIME, ns since the Unix epoch
	cols      trcColumns
	fatal     error // a header that cannot be read: every Next returns it
}

// trcColumns is where each field of a version 2 record is, from its
// $COLUMNS line: the index of the column, or -1.
type trcColumns struct {
	n                            int // number of columns; D is the last
	num, off, typ, bus, id, l, L int
}

// NewTRCReader returns a TRCReader that reads a PEAK trace from rd.
func NewTRCReader(rd io.Reader, opts Options) *TRCReader {
	return &TRCReader{textLines: newTextLines(rd, opts), header: true, version: 10}
}

// Next overwrites *f with the next frame. It returns io.EOF after the
// last frame, a *LineError for a malformed line (unless
// Options.SkipInvalid) or the underlying reader's error. After a
// *LineError, Next may be called again to go on with the following line,
// except after one in the header ($FILEVERSION, $STARTTIME, $COLUMNS),
// which Next then returns again.
func (r *TRCReader) Next(f *frame.Frame) error {
	if r.fatal != nil {
		return r.fatal
	}
	for {
		line, err := r.textLines.next()
		if err != nil {
			return err
		}
		i := skipBlanks(line, 0)
		if i == len(line) {
			continue
		}
		if line[i] == ';' {
			if r.header {
				if col, msg := r.headerLine(line, i+1); msg != "" {
					r.fatal = r.textLines.lineError(line, col, msg)
					return r.fatal
				}
			}
			continue
		}
		if r.header {
			r.header = false
			if r.version >= 20 && r.cols.n == 0 {
				r.fatal = r.textLines.lineError(line, i+1, "a version 2 trace needs a $COLUMNS line before its first record")
				return r.fatal
			}
		}
		var isFrame bool
		var col int
		var msg string
		if r.version >= 20 {
			isFrame, col, msg = r.parse2(line, f)
		} else {
			isFrame, col, msg = r.parse1(line, f)
		}
		if isFrame {
			return nil
		}
		if msg == "" {
			continue
		}
		if err := r.textLines.fail(line, col, msg); err != nil {
			return err
		}
	}
}

// headerLine reads a comment line of the header (s[i:] follows ";"):
// $FILEVERSION, $STARTTIME and $COLUMNS; other comments are skipped.
func (r *TRCReader) headerLine(s []byte, i int) (int, string) {
	rest := s[i:]
	eq := bytes.IndexByte(rest, '=')
	if len(rest) == 0 || rest[0] != '$' || eq < 0 {
		return 0, ""
	}
	key, val := rest[:eq], rest[eq+1:]
	col := i + eq + 2
	// A value ends at a blank or ";" (PEAK has written "$STARTTIME=…;").
	for k, c := range val {
		if isSpace(c) || c == ';' {
			val = val[:k]
			break
		}
	}
	switch string(key) {
	case "$FILEVERSION":
		switch string(val) {
		case "1.0":
			r.version = 10
		case "1.1":
			r.version = 11
		case "1.2":
			r.version = 12
		case "1.3":
			r.version = 13
		case "2.0":
			r.version = 20
		case "2.1":
			r.version = 21
		default:
			return col, "unsupported TRC version (want 1.0 to 1.3, 2.0 or 2.1)"
		}
	case "$STARTTIME":
		t, ok := oleDate(val)
		if !ok {
			return col, "want $STARTTIME as days since 1899-12-30, like 44548.6028595139, before the year 2262"
		}
		r.start = t
	case "$COLUMNS":
		return r.columns(val, col)
	}
	return 0, ""
}

// oleDate converts an OLE date, a decimal count of days since 1899-12-30
// 00:00 UTC, to nanoseconds since the Unix epoch, exactly (rounded to
// the nanosecond): PCAN-View writes ten decimals of a day, about 9 µs,
// which a float64 of the whole count would not keep to the nanosecond.
// It runs once a file, so big.Int's allocations do not matter.
func oleDate(v []byte) (int64, bool) {
	const (
		nsPerDay  = 86400 * 1_000_000_000
		unixEpoch = 25569  // days from 1899-12-30 to 1970-01-01
		maxDays   = 132319 // the last whole day before the year 2262
	)
	whole, frac := v, []byte(nil)
	if dot := bytes.IndexByte(v, '.'); dot >= 0 {
		whole, frac = v[:dot], v[dot+1:]
		if len(frac) == 0 || len(frac) > 40 || !isDigits(frac) {
			return 0, false
		}
	}
	days, ok := numberIn(whole, false, 6)
	if !ok || days > maxDays {
		return 0, false
	}
	ns := (int64(days) - unixEpoch) * nsPerDay
	if len(frac) > 0 {
		num, _ := new(big.Int).SetString(string(frac), 10)
		den := new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(len(frac))), nil)
		num.Mul(num, big.NewInt(nsPerDay))
		num.Add(num, new(big.Int).Rsh(den, 1)) // round half up
		num.Quo(num, den)
		ns += num.Int64() // below nsPerDay
	}
	return ns, true
}

// columns reads the value of $COLUMNS: letters separated by commas.
// Records need O (offset), T (type), I (ID), l (data length) or L (DLC)
// and D (data), which must be last; N (number) and B (bus) are read when
// there, others (d, R) are passed over.
func (r *TRCReader) columns(v []byte, col int) (int, string) {
	c := trcColumns{num: -1, off: -1, typ: -1, bus: -1, id: -1, l: -1, L: -1}
	data := -1
	for k := 0; k < len(v); k += 2 {
		const want = "want $COLUMNS as letters separated by commas, like N,O,T,B,I,d,R,L,D"
		if !isLetters(v[k : k+1]) {
			return col + k, want
		}
		if k+1 < len(v) && v[k+1] != ',' || k+1 == len(v)-1 {
			return col + k + 1, want
		}
		if c.n == 16 {
			return col + k, "more than 16 columns"
		}
		var p *int
		switch v[k] {
		case 'N':
			p = &c.num
		case 'O':
			p = &c.off
		case 'T':
			p = &c.typ
		case 'B':
			p = &c.bus
		case 'I':
			p = &c.id
		case 'l':
			p = &c.l
		case 'L':
			p = &c.L
		case 'D':
			p = &data
		}
		if p != nil {
			if *p >= 0 {
				return col + k, "a column named twice"
			}
			*p = c.n
		}
		c.n++
	}
	switch {
	case c.off < 0 || c.typ < 0 || c.id < 0 || data < 0 || c.l < 0 && c.L < 0:
		return col, "$COLUMNS lacks one of O, T, I, D and l or L"
	case data != c.n-1:
		return col, "$COLUMNS must end with D"
	}
	r.cols = c
	return 0, ""
}

// parse1 reads a record of version 1.x:
//
//	1.0  N) OFFSET ID DLC DATA|RTR|ERROR …
//	1.1  N) OFFSET TYPE ID DLC DATA|RTR
//	1.2  N) OFFSET BUS TYPE ID DLC DATA|RTR
//	1.3  N) OFFSET BUS TYPE ID - DLC DATA|RTR
func (r *TRCReader) parse1(s []byte, f *frame.Frame) (bool, int, string) {
	a, b := token(s, 0)
	if n := s[a:b]; len(n) < 2 || n[len(n)-1] != ')' || !isDigits(n[:len(n)-1]) {
		return false, a + 1, `want the message number, like "12)"`
	}
	a, b = token(s, b)
	off, ok := decimalUnits(s[a:b], 6, 12, true)
	if !ok {
		return false, a + 1, "want the time offset in milliseconds"
	}
	t, ok := addTime(r.start, off)
	if !ok {
		return false, a + 1, "time beyond the year 2262"
	}
	*f = frame.Frame{Time: t}
	channel := 1
	if r.version >= 12 {
		a, b = token(s, b)
		c, ok := numberIn(s[a:b], false, 3)
		if !ok || c == 0 || c > 256 {
			return false, a + 1, "want a bus from 1 to 256"
		}
		channel = int(c)
	}
	if r.version >= 11 {
		a, b = token(s, b)
		switch typ := s[a:b]; string(typ) {
		case "Rx", "Tx":
		case "Error":
			f.Flags = frame.Error
			f.Bus = r.textLines.channel(channel)
			return true, 0, ""
		default:
			// Warng (bus status) and other events.
			if isLetters(typ) {
				return false, 0, ""
			}
			return false, a + 1, "want the message type (Rx, Tx, Warng, Error)"
		}
	}
	a, b = token(s, b)
	idTok := s[a:b]
	if r.version == 10 && isFold(idTok, "ffffffff") {
		return false, 0, "" // bus status
	}
	if msg := trcID(idTok, f); msg != "" {
		return false, a + 1, msg
	}
	if r.version == 13 {
		a, b = token(s, b) // reserved
		if a == b {
			return false, a + 1, "want the reserved column"
		}
	}
	a, b = token(s, b)
	dlc, ok := numberIn(s[a:b], false, 2)
	if !ok || dlc > 8 {
		return false, a + 1, "want a data length from 0 to 8"
	}
	f.Bus = r.textLines.channel(channel)
	if c, d := token(s, b); string(s[c:d]) == "RTR" {
		f.Flags |= frame.Remote
		f.Len = uint8(dlc)
		return trcEnd(s, d)
	} else if r.version == 10 && string(s[c:d]) == "ERROR" {
		*f = frame.Frame{Time: t, Flags: frame.Error, Bus: f.Bus}
		return true, 0, ""
	}
	return trcData(s, b, int(dlc), f)
}

func isLetters(s []byte) bool {
	for _, c := range s {
		if c|0x20 < 'a' || c|0x20 > 'z' {
			return false
		}
	}
	return len(s) > 0
}

// trcID parses a TRC ID: hex, 29-bit when it has more than 4 digits.
func trcID(tok []byte, f *frame.Frame) string {
	v, ok := numberIn(tok, true, 8)
	switch {
	case !ok:
		return "want the ID in hex (at most 8 digits)"
	case len(tok) > 4:
		if v > maskExtID {
			return "29-bit ID over 1FFFFFFF"
		}
		f.Flags |= frame.Extended
	case v > maskStdID:
		return "11-bit ID over 7FF (a 29-bit ID has 8 digits)"
	}
	f.ID = v
	return ""
}

// trcData reads n data bytes from s[i:], and nothing after them.
func trcData(s []byte, i, n int, f *frame.Frame) (bool, int, string) {
	for k := 0; k < n; k++ {
		a, b := token(s, i)
		if a == b {
			return false, a + 1, "fewer data bytes than the length says"
		}
		v, ok := numberIn(s[a:b], true, 2)
		if !ok {
			return false, a + 1, "want a data byte in hex"
		}
		f.Data[k] = uint8(v)
		i = b
	}
	f.Len = uint8(n)
	return trcEnd(s, i)
}

// trcEnd checks that nothing but blanks follows s[i:].
func trcEnd(s []byte, i int) (bool, int, string) {
	if a, _ := token(s, i); a < len(s) {
		return false, a + 1, "more data than the length says"
	}
	return true, 0, ""
}

// parse2 reads a record of version 2.x in the order of its $COLUMNS.
// Status, error-counter and event records (ST, EC, EV) are skipped; an
// error frame (ER) has empty columns in 2.0, so only its time and bus are
// read.
func (r *TRCReader) parse2(s []byte, f *frame.Frame) (bool, int, string) {
	var tok [16][2]int // bounds of each column but D
	c := &r.cols
	i := 0
	for k := 0; k < c.n-1; k++ {
		tok[k][0], tok[k][1] = token(s, i)
		i = tok[k][1]
	}
	field := func(k int) []byte { return s[tok[k][0]:tok[k][1]] }
	if c.num >= 0 && !isDigits(field(c.num)) {
		return false, tok[c.num][0] + 1, "want the message number"
	}
	off, ok := decimalUnits(field(c.off), 6, 12, true)
	if !ok {
		return false, tok[c.off][0] + 1, "want the time offset in milliseconds"
	}
	t, ok := addTime(r.start, off)
	if !ok {
		return false, tok[c.off][0] + 1, "time beyond the year 2262"
	}
	*f = frame.Frame{Time: t}
	typ := field(c.typ)
	switch string(typ) {
	case "DT", "RR", "FD", "FB", "FE", "BI":
	case "ER":
		f.Flags = frame.Error
		return r.trcBus(tok[:], s, f)
	default:
		if len(typ) == 2 && isLetters(typ) {
			return false, 0, "" // ST, EC, EV and types to come
		}
		return false, tok[c.typ][0] + 1, "want the message type (DT, FD, FB, FE, BI, RR, ER, ST, EC, EV)"
	}
	if ok, at, msg := r.trcBus(tok[:], s, f); !ok {
		return false, at, msg
	}
	if msg := trcID(field(c.id), f); msg != "" {
		return false, tok[c.id][0] + 1, msg
	}
	var n uint32
	if c.l >= 0 {
		if n, ok = numberIn(field(c.l), false, 2); !ok || !validFDLen(n) {
			return false, tok[c.l][0] + 1, "want a data length (0-8, 12, 16, 20, 24, 32, 48, 64)"
		}
	} else {
		dlc, ok := numberIn(field(c.L), false, 2)
		if !ok || dlc > 15 {
			return false, tok[c.L][0] + 1, "want a DLC from 0 to 15"
		}
		n = uint32(fdLen[dlc])
		if typ[0] != 'F' && typ[0] != 'B' && dlc > 8 {
			n = 8 // a classic DLC above 8 means 8 bytes
		}
	}
	lenCol := c.L
	if c.l >= 0 {
		lenCol = c.l
	}
	switch string(typ) {
	case "DT", "RR":
		if n > 8 {
			return false, tok[lenCol][0] + 1, "classic frame longer than 8 bytes"
		}
		if typ[0] == 'R' {
			f.Flags |= frame.Remote
			f.Len = uint8(n)
			return trcEnd(s, i)
		}
	default:
		f.Flags |= frame.FD
		if typ[1] == 'B' || typ[1] == 'I' { // FB, BI
			f.Flags |= frame.BRS
		}
		if typ[1] == 'E' || typ[1] == 'I' { // FE, BI
			f.Flags |= frame.ESI
		}
	}
	return trcData(s, i, int(n), f)
}

// trcBus sets f.Bus from a version 2 record's B column, or to channel 1
// without one.
func (r *TRCReader) trcBus(tok [][2]int, s []byte, f *frame.Frame) (bool, int, string) {
	channel := uint32(1)
	if k := r.cols.bus; k >= 0 {
		var ok bool
		channel, ok = numberIn(s[tok[k][0]:tok[k][1]], false, 3)
		if !ok || channel == 0 || channel > 256 {
			return false, tok[k][0] + 1, "want a bus from 1 to 256"
		}
	}
	f.Bus = r.textLines.channel(int(channel))
	return true, 0, ""
}

// detectTRC reports whether the start of a file is a PEAK trace: its
// first line (after blank lines and a byte order mark) is a ";" comment,
// and the comments hold $FILEVERSION or $STARTTIME, a "Start time:",
// "Message Number" or "Columns description" header, or are followed by
// a version 1 record ("1)").
func detectTRC(head []byte) bool {
	found, first := false, true
	headLines(head, func(line []byte) bool {
		i := skipBlanks(line, 0)
		if i == len(line) {
			return true
		}
		if line[i] != ';' {
			if !first {
				a, b := token(line, i)
				n := line[a:b]
				found = len(n) >= 2 && n[len(n)-1] == ')' && isDigits(n[:len(n)-1])
			}
			return false
		}
		first = false
		rest := line[i+1:]
		if hasFold(rest, "$fileversion=") || hasFold(rest, "$starttime=") {
			found = true
			return false
		}
		rest = rest[skipBlanks(rest, 0):]
		found = hasFold(rest, "start time:") || hasFold(rest, "message number") || hasFold(rest, "columns description")
		return !found
	})
	return found
}
