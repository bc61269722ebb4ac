package capture

import (
	"fmt"
	"math"
	"strconv"

	"github.com/yukart/candec/frame"
)

// SocketCAN's flag bits as candump writes them in an 8-digit ID.
const (
	idError   uint32 = 1 << 29 // CAN_ERR_FLAG
	idFlags   uint32 = 3 << 30 // CAN_EFF_FLAG | CAN_RTR_FLAG
	maskExtID uint32 = 1<<29 - 1
	maskStdID uint32 = 1<<11 - 1
	// maxDLC is the largest raw DLC of a classic frame (its length is 8).
	maxDLC = 15
)

// faultKind names what is wrong with a line; the messages are built only
// when an error is reported, so skipping bad lines costs no allocation.
type faultKind uint8

const (
	ok faultKind = iota
	fOpen
	fSeconds
	fDot
	fFraction
	fClose
	fTimeRange
	fSpace
	fIfaceChar
	fIfaceLen
	fIfaceCount
	fIDChar
	fIDMissing
	fIDDigits
	fStdIDRange
	fIDFlags
	fXL
	fFDFlags
	fRemoteLen
	fHex
	fOdd
	fTooMany
	fDLC
	fTrailing
)

// fault is what is wrong with a line and at which 1-based column.
type fault struct {
	kind faultKind
	col  int
	n    int // a count, where the message has one
}

func (f fault) message(line []byte) string {
	char := "end of line"
	if f.col >= 1 && f.col <= len(line) {
		char = strconv.QuoteRune(rune(line[f.col-1]))
	}
	var msg string
	switch f.kind {
	case fOpen:
		msg = `want "(" to open the timestamp, got ` + char
	case fSeconds:
		msg = "want the timestamp's seconds, got " + char
	case fDot:
		msg = `want "." after the timestamp's seconds, got ` + char
	case fFraction:
		msg = "want 1 to 9 digits of fraction in the timestamp"
	case fClose:
		msg = `want ")" to close the timestamp, got ` + char
	case fTimeRange:
		msg = "timestamp beyond the year 2262"
	case fSpace:
		msg = "want a space, got " + char
	case fIfaceChar:
		msg = "invalid character " + char + " in the interface name"
	case fIfaceLen:
		msg = fmt.Sprintf("interface name longer than %d bytes", MaxInterfaceLen)
	case fIfaceCount:
		msg = "more than 256 interfaces"
	case fIDChar:
		msg = "invalid character " + char + " in the CAN ID"
	case fIDMissing:
		msg = `want "#" after the CAN ID`
	case fIDDigits:
		msg = fmt.Sprintf("CAN ID has %d hex digits, want 3 (11-bit) or 8 (29-bit)", f.n)
	case fStdIDRange:
		msg = "11-bit CAN ID over 7FF"
	case fIDFlags:
		msg = "29-bit CAN ID has bit 30 or 31 set"
	case fXL:
		msg = "CAN XL frames are not supported"
	case fFDFlags:
		msg = "want a hex digit of CAN FD flags after \"##\", got " + char
	case fRemoteLen:
		msg = "remote frame length " + char + " over 8"
	case fHex:
		msg = "invalid hex digit " + char + " in the data"
	case fOdd:
		msg = "odd number of hex digits in the data"
	case fTooMany:
		msg = fmt.Sprintf("more than %d data bytes", f.n)
		if f.n == 8 {
			msg += ` (CAN FD frames are written with "##")`
		}
	case fDLC:
		msg = `want a DLC from 9 to F after "_", got ` + char
	case fTrailing:
		msg = "unexpected " + char + " after the frame"
	default:
		msg = "malformed line"
	}
	return "column " + strconv.Itoa(f.col) + ": " + msg
}

// hexVal maps an ASCII hex digit to its value and anything else to
// noHex.
var hexVal = func() (t [256]byte) {
	for i := range t {
		t[i] = noHex
	}
	for c := '0'; c <= '9'; c++ {
		t[c] = byte(c - '0')
	}
	for c := 'a'; c <= 'f'; c++ {
		t[c] = byte(c-'a') + 10
		t[c-'a'+'A'] = byte(c-'a') + 10
	}
	return t
}()

const noHex = 0xFF

var pow10 = [10]int64{1e9, 1e8, 1e7, 1e6, 1e5, 1e4, 1e3, 1e2, 1e1, 1}

func isSpace(c byte) bool { return c == ' ' || c == '\t' }

func isDigit(c byte) bool { return c-'0' <= 9 }

// parseLine parses one line (without its line ending) into *f, leaving
// f.Bus zero, and returns the interface name, a slice of line.
//
//	(SECONDS.FRACTION) IFACE ID#DATA [T|R]
//	                         ID#R[LEN[_DLC]]
//	                         ID##FLAGS DATA
//	                         ID#DATA8_DLC
func parseLine(s []byte, f *frame.Frame) (iface []byte, flt fault) {
	*f = frame.Frame{}
	i, flt := parseTime(s, f)
	if flt.kind != ok {
		return nil, flt
	}
	// Interface, between runs of blanks (candump may pad it).
	if i >= len(s) || !isSpace(s[i]) {
		return nil, fault{kind: fSpace, col: i + 1}
	}
	for i < len(s) && isSpace(s[i]) {
		i++
	}
	start := i
	for i < len(s) && !isSpace(s[i]) {
		if s[i] < ' ' || s[i] == 0x7F {
			return nil, fault{kind: fIfaceChar, col: i + 1}
		}
		i++
	}
	iface = s[start:i]
	if i >= len(s) {
		return nil, fault{kind: fSpace, col: i + 1}
	}
	for i < len(s) && isSpace(s[i]) {
		i++
	}
	if i, flt = parseID(s, i, f); flt.kind != ok {
		return nil, flt
	}
	if i, flt = parseData(s, i, f); flt.kind != ok {
		return nil, flt
	}
	// Optional direction marker (candump -x): " T" sent, " R" received.
	j := i
	for j < len(s) && isSpace(s[j]) {
		j++
	}
	if j > i && j < len(s) && (s[j] == 'T' || s[j] == 'R') {
		j++
		for j < len(s) && isSpace(s[j]) {
			j++
		}
	}
	if j < len(s) {
		return nil, fault{kind: fTrailing, col: j + 1}
	}
	return iface, fault{}
}

// parseTime parses "(SECONDS.FRACTION)" into f.Time and returns the
// index after ")".
func parseTime(s []byte, f *frame.Frame) (int, fault) {
	const nsPerSec = 1_000_000_000
	const maxSec = math.MaxInt64 / nsPerSec
	if len(s) == 0 || s[0] != '(' {
		return 0, fault{kind: fOpen, col: 1}
	}
	i := 1
	var sec int64
	for i < len(s) && isDigit(s[i]) {
		if sec <= maxSec { // stays beyond maxSec once there, without overflowing
			sec = sec*10 + int64(s[i]-'0')
		}
		i++
	}
	if i == 1 {
		return 0, fault{kind: fSeconds, col: i + 1}
	}
	if i >= len(s) || s[i] != '.' {
		return 0, fault{kind: fDot, col: i + 1}
	}
	i++
	start := i
	var frac int64
	for i < len(s) && isDigit(s[i]) {
		if i-start < 9 {
			frac = frac*10 + int64(s[i]-'0')
		}
		i++
	}
	if n := i - start; n == 0 || n > 9 {
		return 0, fault{kind: fFraction, col: start + 1}
	}
	if i >= len(s) || s[i] != ')' {
		return 0, fault{kind: fClose, col: i + 1}
	}
	ns := frac * pow10[i-start]
	if sec > maxSec || sec == maxSec && ns > math.MaxInt64%nsPerSec {
		return 0, fault{kind: fTimeRange, col: 2}
	}
	f.Time = sec*nsPerSec + ns
	return i + 1, fault{}
}

// parseID parses "ID#" into f.ID and f.Flags and returns the index after
// "#".
func parseID(s []byte, i int, f *frame.Frame) (int, fault) {
	start := i
	var id uint32
	for i < len(s) && i-start < 9 {
		v := hexVal[s[i]]
		if v == noHex {
			break
		}
		id = id<<4 | uint32(v)
		i++
	}
	if i >= len(s) {
		return 0, fault{kind: fIDMissing, col: i + 1}
	}
	if s[i] != '#' {
		if hexVal[s[i]] != noHex { // a ninth digit
			return 0, fault{kind: fIDDigits, col: start + 1, n: i - start + 1}
		}
		return 0, fault{kind: fIDChar, col: i + 1}
	}
	switch i - start {
	case 3:
		if id > maskStdID {
			return 0, fault{kind: fStdIDRange, col: start + 1}
		}
	case 8:
		switch {
		case id&idFlags != 0:
			return 0, fault{kind: fIDFlags, col: start + 1}
		case id&idError != 0:
			f.Flags |= frame.Error
			id &= maskExtID
		default:
			f.Flags |= frame.Extended
		}
	default:
		return 0, fault{kind: fIDDigits, col: start + 1, n: i - start}
	}
	f.ID = id
	return i + 1, fault{}
}

// parseData parses what follows "ID#": a remote request, CAN FD flags and
// data, or classic data; it returns the index after it.
func parseData(s []byte, i int, f *frame.Frame) (int, fault) {
	maxLen := 8
	switch {
	case i < len(s) && (s[i] == 'R' || s[i] == 'r'):
		f.Flags |= frame.Remote
		i++
		if i < len(s) && hexVal[s[i]] != noHex {
			if hexVal[s[i]] > 8 {
				return 0, fault{kind: fRemoteLen, col: i + 1}
			}
			f.Len = hexVal[s[i]]
			i++
			if f.Len == 8 && i < len(s) && s[i] == '_' {
				return parseDLC(s, i+1)
			}
		}
		return i, fault{}
	case i < len(s) && s[i] == '#':
		i++
		if i < len(s) && s[i] == '#' {
			return 0, fault{kind: fXL, col: i + 1}
		}
		if i >= len(s) || hexVal[s[i]] == noHex {
			return 0, fault{kind: fFDFlags, col: i + 1}
		}
		// The flags digit: BRS = 1, ESI = 2 (struct canfd_frame); other
		// bits have no meaning and are dropped.
		fd := hexVal[s[i]]
		f.Flags |= frame.FD
		if fd&1 != 0 {
			f.Flags |= frame.BRS
		}
		if fd&2 != 0 {
			f.Flags |= frame.ESI
		}
		maxLen = frame.MaxLen
		i++
	}
	n := 0
	for i < len(s) && !isSpace(s[i]) {
		c := s[i]
		if c == '.' { // can-utils allows dots between bytes
			i++
			continue
		}
		if c == '_' && maxLen == 8 && n == 8 {
			f.Len = uint8(n)
			return parseDLC(s, i+1)
		}
		hi := hexVal[c]
		if hi == noHex {
			return 0, fault{kind: fHex, col: i + 1}
		}
		if i+1 >= len(s) || isSpace(s[i+1]) {
			return 0, fault{kind: fOdd, col: i + 1}
		}
		lo := hexVal[s[i+1]]
		if lo == noHex {
			return 0, fault{kind: fHex, col: i + 2}
		}
		if n == maxLen {
			return 0, fault{kind: fTooMany, col: i + 1, n: maxLen}
		}
		f.Data[n] = hi<<4 | lo
		n++
		i += 2
	}
	f.Len = uint8(n)
	return i, fault{}
}

// parseDLC parses the raw DLC (9 to F) that can-utils writes after "_"
// for a classic frame of length 8. frame.Frame does not keep it.
func parseDLC(s []byte, i int) (int, fault) {
	if i >= len(s) || hexVal[s[i]] == noHex || hexVal[s[i]] <= 8 || hexVal[s[i]] > maxDLC {
		return 0, fault{kind: fDLC, col: i + 1}
	}
	return i + 1, fault{}
}
