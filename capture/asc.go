package capture

import (
	"io"
	"time"

	"github.com/yukart/candec/frame"
)

var _ Source = (*ASCReader)(nil)

// ASCReader reads frames from a Vector ASC log, as CANoe, CANalyzer and
// python-can write it:
//
//	date Sam Sep 30 15:06:13.191 2017
//	base hex  timestamps absolute
//	Begin Triggerblock Sat Sep 30 10:06:13.191 PM 2017
//	   2.501000 1 ErrorFrame
//	   2.510001 2 100 Tx r
//	  17.876708 1  6F9             Rx   d 8 05 0C 00 00 00 00 00 00  Length = 240015
//	  30.005071 CANFD   2 Rx        300  Name  1 0 8  8 01 02 03 04 05 06 07 08   102203 …
//
// A frame's time is the last date (or trigger block) line's wall-clock
// time, taken as UTC, plus the line's seconds, in nanoseconds exactly;
// with "timestamps relative", plus the seconds since the previous
// timestamped line. Channel c is Bus c-1 ("can<c-1>"). Lines that are no
// frame (comments, statistics, chip status, J1939TP messages, other
// events) are skipped as python-can skips them. Error frames come out
// with frame.Error set. See docs/capture-asc.md.
//
// It is not safe for concurrent use.
type ASCReader struct {
	textLines       // Interface, Skipped, Line
	dec       bool  // base dec: IDs, DLCs and data in decimal
	relative  bool  // timestamps relative to the previous event
	start     int64 // the date's or the trigger block's time, ns
	prev      int64 // the time of the previous timestamped line, ns
}

// NewASCReader returns an ASCReader that reads an ASC log from rd.
func NewASCReader(rd io.Reader, opts Options) *ASCReader {
	return &ASCReader{textLines: newTextLines(rd, opts)}
}

// Next overwrites *f with the next frame. It returns io.EOF after the
// last frame, a *LineError for a malformed line (unless
// Options.SkipInvalid) or the underlying reader's error. After a
// *LineError, Next may be called again to go on with the following line.
func (r *ASCReader) Next(f *frame.Frame) error {
	for {
		line, err := r.textLines.next()
		if err != nil {
			return err
		}
		isFrame, col, msg := r.parse(line, f)
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

// parse reads one line: a frame into *f (isFrame), a header line into the
// reader, or nothing. A malformed line gives the 1-based column and what
// is wrong; msg is "" for a line that is skipped.
func (r *ASCReader) parse(s []byte, f *frame.Frame) (isFrame bool, col int, msg string) {
	i := skipBlanks(s, 0)
	if i == len(s) {
		return false, 0, ""
	}
	rest := s[i:]
	switch {
	case isDigit(s[i]):
		return r.event(s, i, f)
	case isWord(rest, "date"):
		t, col, msg := parseASCDate(s, i+4)
		if msg != "" {
			return false, col, msg
		}
		r.start, r.prev = t, t
	case isWord(rest, "base"):
		col, msg := r.base(s, i+4)
		return false, col, msg
	case isWord(rest, "begin"):
		a, b := token(s, i+5)
		if !isFold(s[a:b], "triggerblock") {
			return false, 0, ""
		}
		// A trigger block's time replaces the date's; without one the
		// date's stays.
		if c, _ := token(s, b); c < len(s) {
			t, col, msg := parseASCDate(s, b)
			if msg != "" {
				return false, col, msg
			}
			r.start = t
		}
		r.prev = r.start
	}
	return false, 0, ""
}

// isWord reports whether s starts with the lower-case word w, in any case,
// followed by a blank or the end.
func isWord(s []byte, w string) bool {
	return hasFold(s, w) && (len(s) == len(w) || isSpace(s[len(w)]))
}

// base reads "base hex|dec [timestamps absolute|relative]" after "base".
func (r *ASCReader) base(s []byte, i int) (int, string) {
	a, b := token(s, i)
	switch {
	case isFold(s[a:b], "hex"):
		r.dec = false
	case isFold(s[a:b], "dec"):
		r.dec = true
	default:
		return a + 1, `want "hex" or "dec" after "base"`
	}
	a, b = token(s, b)
	if a == b {
		return 0, ""
	}
	if !isFold(s[a:b], "timestamps") {
		return a + 1, `want "timestamps absolute" or "timestamps relative" after the base`
	}
	a, b = token(s, b)
	switch {
	case isFold(s[a:b], "absolute"):
		r.relative = false
	case isFold(s[a:b], "relative"):
		r.relative = true
	default:
		return a + 1, `want "absolute" or "relative" after "timestamps"`
	}
	return 0, ""
}

// event reads a line that starts with a time: a frame, an error frame, or
// an event that is no frame.
func (r *ASCReader) event(s []byte, i int, f *frame.Frame) (bool, int, string) {
	a, b := token(s, i)
	off, ok := decimalUnits(s[a:b], 9, 9, true)
	if !ok {
		return false, a + 1, "want the time in seconds, like 1.234567 (at most 9 digits before the point)"
	}
	base := r.start
	if r.relative {
		base = r.prev
	}
	t, ok := addTime(base, off)
	if !ok {
		return false, a + 1, "time beyond the year 2262"
	}
	r.prev = t
	a, b = token(s, b)
	switch tok := s[a:b]; {
	case string(tok) == "CANFD":
		*f = frame.Frame{Time: t}
		return r.fd(s, b, f)
	case isDigits(tok):
		c, d := token(s, b)
		if hasFold(s[c:d], "errorframe") {
			return r.errorFrame(s, a, b, t, f)
		}
		// A frame has its direction after its ID; statistics, J1939TP
		// messages and other events on a channel do not.
		e, g := token(s, d)
		switch string(s[e:g]) {
		case "Rx", "Tx":
		default:
			return false, 0, ""
		}
		*f = frame.Frame{Time: t}
		if col, msg := r.setChannel(s, a, b, f); msg != "" {
			return false, col, msg
		}
		if msg := r.id(s[c:d], f); msg != "" {
			return false, c + 1, msg
		}
		return r.classic(s, g, f)
	}
	return false, 0, ""
}

func isDigits(s []byte) bool {
	for _, c := range s {
		if !isDigit(c) {
			return false
		}
	}
	return len(s) > 0
}

// setChannel sets f.Bus from the channel s[a:b].
func (r *ASCReader) setChannel(s []byte, a, b int, f *frame.Frame) (int, string) {
	c, ok := numberIn(s[a:b], false, 3)
	if !ok || c == 0 || c > 256 {
		return a + 1, "want a channel from 1 to 256"
	}
	f.Bus = r.textLines.channel(int(c))
	return 0, ""
}

func (r *ASCReader) errorFrame(s []byte, a, b int, t int64, f *frame.Frame) (bool, int, string) {
	*f = frame.Frame{Time: t, Flags: frame.Error}
	if col, msg := r.setChannel(s, a, b, f); msg != "" {
		return false, col, msg
	}
	return true, 0, ""
}

// id parses an ASC CAN ID, a number in the file's base with "x" after a
// 29-bit one, into f.ID and f.Flags.
func (r *ASCReader) id(tok []byte, f *frame.Frame) string {
	ext := false
	if n := len(tok); n > 0 && tok[n-1]|0x20 == 'x' {
		ext, tok = true, tok[:n-1]
	}
	digits := 8
	if r.dec {
		digits = 9
	}
	v, ok := numberIn(tok, !r.dec, digits)
	switch {
	case !ok:
		return "want a CAN ID"
	case ext && v > maskExtID:
		return "29-bit CAN ID over 1FFFFFFF"
	case !ext && v > maskStdID:
		return `11-bit CAN ID over 7FF (a 29-bit ID ends in "x")`
	}
	f.ID = v
	if ext {
		f.Flags |= frame.Extended
	}
	return ""
}

// classic reads what follows the direction of a classic frame:
// "d DLC DATA…" or "r [DLC]", and ignores the rest of the line (length,
// bit count, ID again).
func (r *ASCReader) classic(s []byte, i int, f *frame.Frame) (bool, int, string) {
	a, b := token(s, i)
	if b-a != 1 || (s[a]|0x20 != 'd' && s[a]|0x20 != 'r') {
		return false, a + 1, `want "d" (data) or "r" (remote) after the direction`
	}
	if s[a]|0x20 == 'r' {
		f.Flags |= frame.Remote
		// The DLC is optional; what follows it ("Length = …") is not
		// a number.
		a, b = token(s, b)
		if v, ok := numberIn(s[a:b], !r.dec, 2); ok {
			if v > 8 {
				return false, a + 1, "remote frame DLC over 8"
			}
			f.Len = uint8(v)
		}
		return true, 0, ""
	}
	a, b = token(s, b)
	dlc, ok := numberIn(s[a:b], !r.dec, 4)
	if !ok {
		return false, a + 1, "want the DLC"
	}
	// A classic frame with a DLC above 8 has 8 data bytes; python-can
	// keeps the first 8 of what the line holds.
	n := 8
	if dlc < 8 {
		n = int(dlc)
	}
	return r.data(s, b, n, f)
}

// data reads n data bytes from s[i:] into f.
func (r *ASCReader) data(s []byte, i, n int, f *frame.Frame) (bool, int, string) {
	digits := 2
	if r.dec {
		digits = 3
	}
	for k := 0; k < n; k++ {
		a, b := token(s, i)
		if a == b {
			return false, a + 1, "fewer data bytes than the length says"
		}
		v, ok := numberIn(s[a:b], !r.dec, digits)
		if !ok || v > 0xFF {
			return false, a + 1, "want a data byte"
		}
		f.Data[k] = uint8(v)
		i = b
	}
	f.Len = uint8(n)
	return true, 0, ""
}

// fd reads a CANFD line after "CANFD":
//
//	CHANNEL DIR ID [SYMBOLIC-NAME] BRS ESI DLC DATA-LENGTH DATA… (the rest ignored)
//	CHANNEL DIR ErrorFrame …
func (r *ASCReader) fd(s []byte, i int, f *frame.Frame) (bool, int, string) {
	a, b := token(s, i)
	if col, msg := r.setChannel(s, a, b, f); msg != "" {
		return false, col, msg
	}
	a, b = token(s, b)
	switch string(s[a:b]) {
	case "Rx", "Tx":
	case "TxRq":
		return false, 0, ""
	default:
		return false, a + 1, `want "Rx" or "Tx" after the channel`
	}
	a, b = token(s, b)
	if hasFold(s[a:b], "errorframe") {
		f.Flags = frame.Error
		return true, 0, ""
	}
	if msg := r.id(s[a:b], f); msg != "" {
		return false, a + 1, msg
	}
	// The symbolic name is optional; a column of digits is BRS, as
	// python-can decides it.
	a, b = token(s, b)
	if !isDigits(s[a:b]) {
		a, b = token(s, b)
	}
	brs, brsCol := s[a:b], a+1
	a, b = token(s, b)
	esi := s[a:b]
	if string(brs) != "0" && string(brs) != "1" {
		return false, brsCol, "want BRS 0 or 1"
	}
	if string(esi) != "0" && string(esi) != "1" {
		return false, a + 1, "want ESI 0 or 1"
	}
	a, b = token(s, b)
	dlc, ok := numberIn(s[a:b], !r.dec, 2)
	if !ok || dlc > 15 {
		return false, a + 1, "want a DLC from 0 to 15"
	}
	a, b = token(s, b)
	n, ok := numberIn(s[a:b], false, 2)
	if !ok || !validFDLen(n) {
		return false, a + 1, "want a CAN FD data length (0-8, 12, 16, 20, 24, 32, 48, 64)"
	}
	if n == 0 {
		// No data: a remote frame, as python-can reads it. CAN FD has
		// none, so it is a classic remote frame of the DLC.
		if dlc > 8 {
			return false, a + 1, "remote frame DLC over 8"
		}
		f.Flags |= frame.Remote
		f.Len = uint8(dlc)
		return true, 0, ""
	}
	f.Flags |= frame.FD
	if brs[0] == '1' {
		f.Flags |= frame.BRS
	}
	if esi[0] == '1' {
		f.Flags |= frame.ESI
	}
	return r.data(s, b, int(n), f)
}

// parseASCDate parses the date of a date or Begin Triggerblock line from
// s[i:], like "Sam Sep 30 15:06:13.191 2017" or "Thu Apr 28 10:44:52 pm
// 2022", as UTC: the day's name (any language: it is not read), the
// month's name (English or German), the day, the time with or without a
// fraction, am or pm in any case, the year.
func parseASCDate(s []byte, i int) (int64, int, string) {
	const want = `want a date like "Sat Sep 30 15:06:13.191 2017"`
	a, b := token(s, i) // the day's name
	if a == b {
		return 0, a + 1, want
	}
	a, b = token(s, b)
	month := monthOf(s[a:b])
	if month == 0 {
		return 0, a + 1, "unknown month name"
	}
	a, b = token(s, b)
	day, ok := numberIn(s[a:b], false, 2)
	if !ok || day < 1 || day > 31 {
		return 0, a + 1, "want the day of the month"
	}
	a, b = token(s, b)
	hour, min, sec, frac, col, msg := parseClock(s, a, b)
	if msg != "" {
		return 0, col, msg
	}
	a, b = token(s, b)
	switch {
	case isFold(s[a:b], "am"):
		if hour == 12 {
			hour = 0
		}
		a, b = token(s, b)
	case isFold(s[a:b], "pm"):
		// A 24-hour time with "pm" (15:06 pm) stays as it is.
		if hour >= 1 && hour < 12 {
			hour += 12
		}
		a, b = token(s, b)
	}
	year, ok := numberIn(s[a:b], false, 4)
	if !ok || year < 1700 || year > 2261 {
		return 0, a + 1, "want a year from 1700 to 2261"
	}
	if c, _ := token(s, b); c < len(s) {
		return 0, c + 1, "unexpected text after the year"
	}
	t := time.Date(int(year), month, int(day), int(hour), int(min), int(sec), 0, time.UTC)
	if t.Day() != int(day) {
		return 0, i + 1, "no such day in the month"
	}
	return t.UnixNano() + frac, 0, ""
}

// parseClock parses "H:MM:SS" or "H:MM:SS.FRACTION" in s[a:b].
func parseClock(s []byte, a, b int) (hour, min, sec uint32, frac int64, col int, msg string) {
	const want = "want a time of day like 15:06:13.191"
	tok := s[a:b]
	var part [3]uint32
	k := 0
	for p := range part {
		j := k
		for k < len(tok) && isDigit(tok[k]) && k-j < 2 {
			part[p] = part[p]*10 + uint32(tok[k]-'0')
			k++
		}
		if k == j {
			return 0, 0, 0, 0, a + k + 1, want
		}
		if p < 2 {
			if k >= len(tok) || tok[k] != ':' {
				return 0, 0, 0, 0, a + k + 1, want
			}
			k++
		}
	}
	if k < len(tok) {
		if tok[k] != '.' {
			return 0, 0, 0, 0, a + k + 1, want
		}
		n := len(tok) - k - 1
		if n < 1 || n > 9 || !isDigits(tok[k+1:]) {
			return 0, 0, 0, 0, a + k + 1, "want 1 to 9 digits of fraction in the time of day"
		}
		for _, c := range tok[k+1:] {
			frac = frac*10 + int64(c-'0')
		}
		frac *= pow10[n]
	}
	if part[0] > 23 || part[1] > 59 || part[2] > 59 {
		return 0, 0, 0, 0, a + 1, "time of day out of range"
	}
	return part[0], part[1], part[2], frac, 0, ""
}

// monthOf returns the month whose English or German name (or its
// abbreviation) s is, in any case: "Sep", "Okt", "Mär" (UTF-8 or Latin-1),
// "Mrz", "Dezember".
func monthOf(s []byte) time.Month {
	if len(s) < 3 {
		return 0
	}
	var p [3]byte
	n := 0
	for i := 0; i < len(s) && n < 3; i++ {
		c := s[i]
		switch {
		case c == 0xC3 && i+1 < len(s) && (s[i+1] == 0xA4 || s[i+1] == 0x84): // ä, Ä
			c = 'a'
			i++
		case c == 0xE4 || c == 0xC4: // ä, Ä in Latin-1
			c = 'a'
		case c >= 'A' && c <= 'Z':
			c |= 0x20
		}
		p[n] = c
		n++
	}
	if n < 3 {
		return 0
	}
	for k := 0; k+3 <= len(monthNames); k += 3 {
		if monthNames[k] == p[0] && monthNames[k+1] == p[1] && monthNames[k+2] == p[2] {
			return ascMonths[k/3]
		}
	}
	return 0
}

const monthNames = "janfebmaraprmayjunjulaugsepoctnovdecmrzmaioktdez"

var ascMonths = [...]time.Month{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 3, 5, 10, 12}

// detectASC reports whether the start of a file is a Vector ASC log: its
// first line (after blank lines and a byte order mark) is a date line
// with a date, or one of its first ten lines is "base hex" or "base dec".
func detectASC(head []byte) bool {
	found, n := false, 0
	headLines(head, func(line []byte) bool {
		i := skipBlanks(line, 0)
		if i == len(line) {
			return true
		}
		n++
		switch rest := line[i:]; {
		case n == 1 && isWord(rest, "date"):
			_, _, msg := parseASCDate(line, i+4)
			found = msg == ""
		case isWord(rest, "base"):
			a, b := token(line, i+4)
			found = isFold(line[a:b], "hex") || isFold(line[a:b], "dec")
		}
		return !found && n < 10
	})
	return found
}
