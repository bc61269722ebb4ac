package capture

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"math"
	"strconv"

	"github.com/yukart/candec/frame"
)

// Limits of a line.
const (
	// MaxLineLen is the longest line a Reader accepts; a longer one is a
	// malformed line. A candump line is at most about 200 bytes.
	MaxLineLen = 64 << 10
	// MaxInterfaceLen is the longest interface name a Reader accepts
	// (Linux allows 15 bytes).
	MaxInterfaceLen = 64
	// maxErrorText is how much of a malformed line a LineError keeps.
	maxErrorText = 128
)

// Options tune how a capture is read. The zero value is strict.
type Options struct {
	// SkipInvalid skips malformed lines and counts them (Reader.Skipped)
	// instead of returning a *LineError.
	SkipInvalid bool
	// Stdin is what Open reads for the name "-"; nil is os.Stdin.
	Stdin io.Reader
}

// LineError is a malformed line.
type LineError struct {
	// Line is the 1-based line number.
	Line int
	// Text is the line without its line ending, cut to 128 bytes.
	Text string
	// Msg says what is wrong, starting with the 1-based column.
	Msg string
}

// Error reads like `capture: line 7: column 24: invalid hex digit 'G' in
// the data: "(1.000000) can0 123#DEADBEEG"`.
func (e *LineError) Error() string {
	return fmt.Sprintf("capture: line %d: %s: %q", e.Line, e.Msg, e.Text)
}

// Reader reads frames from a candump log. It is not safe for concurrent
// use.
type Reader struct {
	br      *bufio.Reader
	opts    Options
	line    int
	skipped int
	// Interface names by bus index, and the reverse.
	names [256]string
	buses map[string]uint8
	// last is the bus of the line before: a log is mostly one or two
	// interfaces, and comparing the name is cheaper than the map.
	last     uint8
	lastName string
}

// NewReader returns a Reader that reads a candump log from rd.
func NewReader(rd io.Reader, opts Options) *Reader {
	return &Reader{
		br:    bufio.NewReaderSize(rd, MaxLineLen),
		opts:  opts,
		buses: make(map[string]uint8),
	}
}

// Next overwrites *f with the next frame, its Bus the index of its
// interface. It returns io.EOF after the last frame, a *LineError for a
// malformed line (unless Options.SkipInvalid), or the underlying reader's
// error. After a *LineError, Next may be called again to go on with the
// following line. Empty lines are skipped without counting.
func (r *Reader) Next(f *frame.Frame) error {
	for {
		line, err := r.br.ReadSlice('\n')
		if err == bufio.ErrBufferFull {
			if err := r.tooLong(line); err != nil {
				return err
			}
			continue
		}
		if err != nil && (err != io.EOF || len(line) == 0) {
			if err != io.EOF {
				err = fmt.Errorf("capture: line %d: read: %w", r.line+1, err)
			}
			return err
		}
		r.line++
		line = trimEOL(line)
		if isBlank(line) {
			continue
		}
		iface, flt := parseLine(line, f)
		if flt.kind == ok {
			var bus uint8
			if bus, flt = r.bus(iface, line); flt.kind == ok {
				f.Bus = bus
				return nil
			}
		}
		if r.opts.SkipInvalid {
			r.skipped++
			continue
		}
		return r.lineError(line, flt.message(line))
	}
}

// tooLong consumes the rest of a line longer than the buffer and reports
// it (or counts it when skipping).
func (r *Reader) tooLong(head []byte) error {
	text := string(head[:maxErrorText])
	var err error
	for {
		_, err = r.br.ReadSlice('\n')
		if err != bufio.ErrBufferFull {
			break
		}
	}
	r.line++
	if err != nil && err != io.EOF {
		return fmt.Errorf("capture: line %d: read: %w", r.line, err)
	}
	if r.opts.SkipInvalid {
		r.skipped++
		return nil
	}
	return &LineError{Line: r.line, Text: text, Msg: "line longer than " + strconv.Itoa(MaxLineLen) + " bytes"}
}

func (r *Reader) lineError(line []byte, msg string) error {
	if len(line) > maxErrorText {
		line = line[:maxErrorText]
	}
	return &LineError{Line: r.line, Text: string(line), Msg: msg}
}

// Line returns the number of the line last read: the line of the frame
// Next returned, or of its error.
func (r *Reader) Line() int { return r.line }

// Skipped returns how many malformed lines were skipped
// (Options.SkipInvalid).
func (r *Reader) Skipped() int { return r.skipped }

// Interface returns the name of the interface with the given bus index,
// or "" if no frame on it has been read.
func (r *Reader) Interface(bus uint8) string { return r.names[bus] }

// bus returns the index of the named interface, assigning one to a name
// seen for the first time.
func (r *Reader) bus(name, line []byte) (uint8, fault) {
	if r.lastName != "" && string(name) == r.lastName { // no allocation
		return r.last, fault{}
	}
	if b, found := r.buses[string(name)]; found { // no allocation
		r.last, r.lastName = b, r.names[b]
		return b, fault{}
	}
	col := cap(line) - cap(name) + 1 // name is a slice of line
	if len(name) > MaxInterfaceLen {
		return 0, fault{kind: fIfaceLen, col: col}
	}
	if len(r.buses) == len(r.names) {
		return 0, fault{kind: fIfaceCount, col: col}
	}
	b, want := canIndex(name)
	if !want || r.names[b] != "" {
		b = 255
		for r.names[b] != "" {
			b--
		}
	}
	s := string(name)
	r.names[b] = s
	r.buses[s] = b
	r.last, r.lastName = b, s
	return b, fault{}
}

// canIndex returns N for an interface named can<N> or vcan<N> with N a
// decimal number below 256 written without leading zeros.
func canIndex(name []byte) (uint8, bool) {
	switch {
	case bytes.HasPrefix(name, []byte("can")):
		name = name[3:]
	case bytes.HasPrefix(name, []byte("vcan")):
		name = name[4:]
	default:
		return 0, false
	}
	if len(name) == 0 || len(name) > 3 || (name[0] == '0' && len(name) > 1) {
		return 0, false
	}
	n := 0
	for _, c := range name {
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int(c-'0')
	}
	if n > math.MaxUint8 {
		return 0, false
	}
	return uint8(n), true
}

func trimEOL(b []byte) []byte {
	if n := len(b); n > 0 && b[n-1] == '\n' {
		b = b[:n-1]
	}
	if n := len(b); n > 0 && b[n-1] == '\r' {
		b = b[:n-1]
	}
	return b
}

func isBlank(b []byte) bool {
	for _, c := range b {
		if !isSpace(c) {
			return false
		}
	}
	return true
}
