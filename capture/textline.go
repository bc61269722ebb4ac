package capture

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"strconv"
)

// textLines is what the readers of the text formats of other tools (Vector
// ASC, PEAK TRC) share: lines read without allocation, numbered and capped
// at MaxLineLen, the buses seen, and the LineErrors or the skip count of
// malformed records. Their faults are constant strings, so that skipping
// a bad record allocates nothing either.
type textLines struct {
	br      *bufio.Reader
	opts    Options
	line    int
	skipped int
	seen    [256]bool
}

// Skipped returns how many malformed lines were skipped
// (Options.SkipInvalid).
func (t *textLines) Skipped() int { return t.skipped }

// Line returns the number of the line last read.
func (t *textLines) Line() int { return t.line }

func newTextLines(rd io.Reader, opts Options) textLines {
	return textLines{br: bufio.NewReaderSize(rd, MaxLineLen), opts: opts}
}

// next returns the next line without its line ending (and, on line 1,
// without a UTF-8 byte order mark). A line longer than MaxLineLen is a
// *LineError, or is counted and passed over with SkipInvalid.
func (t *textLines) next() ([]byte, error) {
	for {
		line, err := t.br.ReadSlice('\n')
		if err == bufio.ErrBufferFull {
			text := string(line[:maxErrorText])
			for err == bufio.ErrBufferFull {
				_, err = t.br.ReadSlice('\n')
			}
			t.line++
			if err != nil && err != io.EOF {
				return nil, fmt.Errorf("capture: line %d: read: %w", t.line, err)
			}
			if t.opts.SkipInvalid {
				t.skipped++
				continue
			}
			return nil, &LineError{Line: t.line, Text: text, Msg: "line longer than " + strconv.Itoa(MaxLineLen) + " bytes"}
		}
		if err != nil && (err != io.EOF || len(line) == 0) {
			if err != io.EOF {
				err = fmt.Errorf("capture: line %d: read: %w", t.line+1, err)
			}
			return nil, err
		}
		t.line++
		line = trimEOL(line)
		if t.line == 1 {
			line = bytes.TrimPrefix(line, utf8BOM)
		}
		return line, nil
	}
}

var utf8BOM = []byte{0xEF, 0xBB, 0xBF}

// fail reports a malformed record at a 1-based column of line: nil when
// it is counted and skipped (SkipInvalid), else its *LineError.
func (t *textLines) fail(line []byte, col int, msg string) error {
	if t.opts.SkipInvalid {
		t.skipped++
		return nil
	}
	return t.lineError(line, col, msg)
}

func (t *textLines) lineError(line []byte, col int, msg string) *LineError {
	if len(line) > maxErrorText {
		line = line[:maxErrorText]
	}
	return &LineError{Line: t.line, Text: string(line), Msg: "column " + strconv.Itoa(col) + ": " + msg}
}

// channel turns a format's 1-based channel number into a bus index and
// marks the bus as seen: channel c is can(c-1).
func (t *textLines) channel(c int) uint8 {
	b := uint8(c - 1)
	t.seen[b] = true
	return b
}

// Interface returns "can<bus>" once a frame of that bus was read, else "".
func (t *textLines) Interface(bus uint8) string {
	if !t.seen[bus] {
		return ""
	}
	return textBusNames[bus]
}

// textBusNames holds "can0" … "can255", so that Interface does not
// allocate. They are slices of one string, made with one allocation:
// this runs at every start of a binary that links capture.
var textBusNames = func() (n [256]string) {
	b := make([]byte, 0, 256*len("can255"))
	ends := [256]int{}
	for i := range n {
		b = strconv.AppendInt(append(b, "can"...), int64(i), 10)
		ends[i] = len(b)
	}
	all, start := string(b), 0
	for i := range n {
		n[i], start = all[start:ends[i]], ends[i]
	}
	return n
}()

// token returns the bounds of the blank-separated token at or after i:
// s[start:end], with end == start at the end of the line.
func token(s []byte, i int) (start, end int) {
	for i < len(s) && isSpace(s[i]) {
		i++
	}
	start = i
	for i < len(s) && !isSpace(s[i]) {
		i++
	}
	return start, i
}

// skipBlanks returns the index of the first non-blank byte at or after i.
func skipBlanks(s []byte, i int) int {
	for i < len(s) && isSpace(s[i]) {
		i++
	}
	return i
}

// hasFold reports whether s starts with the lower-case ASCII word w, in
// any case.
func hasFold(s []byte, w string) bool {
	if len(s) < len(w) {
		return false
	}
	for i := 0; i < len(w); i++ {
		if s[i]|0x20 != w[i] {
			return false
		}
	}
	return true
}

// isFold reports whether s is the lower-case ASCII word w, in any case.
func isFold(s []byte, w string) bool { return len(s) == len(w) && hasFold(s, w) }

// decimalUnits parses the unsigned decimal number s ("12", "12.345") as
// an integer count of 10^-scale units: exactly, digits past the scale
// truncated. It refuses more than maxInt digits before the point (so the
// result cannot overflow), a missing integer part, a point without
// digits after it, and a point at all when point is false.
// The scale is 0 to 9.
func decimalUnits(s []byte, scale, maxInt int, point bool) (int64, bool) {
	var v int64
	i := 0
	for i < len(s) && isDigit(s[i]) {
		v = v*10 + int64(s[i]-'0')
		i++
		if i > maxInt {
			return 0, false
		}
	}
	if i == 0 {
		return 0, false
	}
	unit := pow10[9-scale] // 10^scale
	v *= unit
	if i == len(s) {
		return v, true
	}
	if !point || s[i] != '.' || i+1 == len(s) {
		return 0, false
	}
	i++
	for ; i < len(s); i++ {
		if !isDigit(s[i]) {
			return 0, false
		}
		unit /= 10
		v += int64(s[i]-'0') * unit // 0 once past the scale
	}
	return v, true
}

// addTime adds an offset to a start time, refusing what overflows.
func addTime(start, offset int64) (int64, bool) {
	t := start + offset
	if (offset > 0 && t < start) || (offset < 0 && t > start) {
		return 0, false
	}
	return t, true
}

// numberIn parses s as an unsigned number in base 16 or 10 of at most
// maxDigits digits.
func numberIn(s []byte, hex bool, maxDigits int) (uint32, bool) {
	if len(s) == 0 || len(s) > maxDigits {
		return 0, false
	}
	var v uint32
	for _, c := range s {
		if hex {
			d := hexVal[c]
			if d == noHex {
				return 0, false
			}
			v = v<<4 | uint32(d)
		} else {
			if !isDigit(c) {
				return 0, false
			}
			v = v*10 + uint32(c-'0')
		}
	}
	return v, true
}

// fdLen is the data length of each CAN FD DLC.
var fdLen = [16]uint8{0, 1, 2, 3, 4, 5, 6, 7, 8, 12, 16, 20, 24, 32, 48, 64}

// validFDLen reports whether n is the data length of a CAN FD DLC.
func validFDLen(n uint32) bool {
	if n <= 8 {
		return true
	}
	for _, l := range fdLen[9:] {
		if uint32(l) == n {
			return true
		}
	}
	return false
}

// headLines calls fn with each line of the start of a file (without
// its line ending and a leading byte order mark) until fn returns false.
// The last line may be cut.
func headLines(head []byte, fn func(line []byte) bool) {
	head = bytes.TrimPrefix(head, utf8BOM)
	for len(head) > 0 {
		line := head
		if i := bytes.IndexByte(head, '\n'); i >= 0 {
			line, head = head[:i], head[i+1:]
		} else {
			head = nil
		}
		if !fn(bytes.TrimRight(line, "\r")) {
			return
		}
	}
}
