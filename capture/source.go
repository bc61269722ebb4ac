package capture

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/yukart/candec/frame"
)

// Source is a stream of CAN frames, whatever the format it is read from.
// Every consumer of frames (decode, the policy driver, tune, replay, the
// demo and the bench) reads through it.
type Source interface {
	// Next overwrites *f with the next frame, its Bus the index of its
	// interface (see Interface). It returns io.EOF after the last frame
	// and a *LineError (text formats) or an *OffsetError (binary ones)
	// for a malformed record (unless Options.SkipInvalid); after a
	// malformed record, Next may be called again.
	// Next allocates nothing per frame.
	Next(f *frame.Frame) error
	// Interface returns the name of the interface with the given bus
	// index, or "" if no frame had it yet.
	Interface(bus uint8) string
	// Skipped returns how many malformed records were skipped
	// (Options.SkipInvalid).
	Skipped() int
}

var _ Source = (*Reader)(nil)

// ErrFormat: the content is in no format NewSource knows.
var ErrFormat = errors.New("capture: unknown format")

// format is one capture format NewSource can read.
type format struct {
	// name names the format in File.Format and in messages.
	name string
	// detect reports whether head, the start of a capture, is in this
	// format. head is what the capture had given when asked: at least
	// one byte, usually its first line, at most sniffLen bytes, and it
	// may end inside a line, so detect says yes only when head is enough
	// to be sure. It must not keep head.
	detect func(head []byte) bool
	// open returns a Source that reads the capture from its start.
	open func(r io.Reader, opts Options) Source
	// random: the format needs to seek (MDF's blocks link to each other
	// by offset). Where the input can seek, open gets it as it is, at
	// its start; otherwise the format copes with a stream.
	random bool
}

// formats are the formats NewSource knows, tried in this order. A new
// format is a reader file of its own and one line here. The first is
// also the format of an empty capture.
var formats = []format{
	{name: "candump", detect: isCandump, open: func(r io.Reader, opts Options) Source { return NewReader(r, opts) }},
	{name: "asc", detect: detectASC, open: func(r io.Reader, opts Options) Source { return NewASCReader(r, opts) }},
	{name: "trc", detect: detectTRC, open: func(r io.Reader, opts Options) Source { return NewTRCReader(r, opts) }},
	{name: "blf", detect: detectBLF, open: func(r io.Reader, opts Options) Source { return NewBLFReader(r, opts) }},
	{name: "mf4", detect: detectMF4, random: true, open: func(r io.Reader, opts Options) Source { return NewMF4Reader(r, opts) }},
}

// sniffLen is the most NewSource reads of a capture before it decides on
// its format.
const sniffLen = 4 << 10

// NewSource returns a Source that reads the capture in r, of the format
// its content shows (see the package documentation, "Formats"). It reads
// the head of r, but no more than r has to give for the format to show:
// on a pipe one line is enough, and NewSource does not wait for more.
// An empty r is an empty capture, whose Source returns io.EOF at once.
// Content of no known format is ErrFormat; a read error is returned as
// Next would return it.
func NewSource(r io.Reader, opts Options) (Source, error) {
	src, _, err := newSource(r, opts)
	return src, err
}

// newSource is NewSource, also returning the format's name.
func newSource(r io.Reader, opts Options) (Source, string, error) {
	// The size is the Reader's, so that NewReader takes br as it is
	// rather than buffer it once more.
	// An input that can seek is handed as it is to a format that must
	// (see format.random), from where it was.
	start, canSeek := int64(0), false
	if rs, ok := r.(io.ReadSeeker); ok {
		if _, ok := r.(io.ReaderAt); ok {
			var err error
			start, err = rs.Seek(0, io.SeekCurrent)
			canSeek = err == nil
		}
	}
	br := bufio.NewReaderSize(r, MaxLineLen)
	head, err := sniff(br)
	if err != nil && err != io.EOF {
		return nil, "", fmt.Errorf("capture: read: %w", err)
	}
	var rest io.Reader = br
	if err == io.EOF {
		// The whole capture is in head. Reading br again would ask r
		// again, and a terminal that gave one end of input waits for
		// another.
		rest = bytes.NewReader(head)
		if isBlankText(head) {
			f := formats[0]
			return f.open(rest, opts), f.name, nil
		}
	}
	if isGzip(head) {
		return newGzipSource(rest, opts)
	}
	for _, f := range formats {
		if !f.detect(head) {
			continue
		}
		if f.random && canSeek {
			if _, err := r.(io.Seeker).Seek(start, io.SeekStart); err != nil {
				return nil, "", fmt.Errorf("capture: seek: %w", err)
			}
			return f.open(r, opts), f.name, nil
		}
		return f.open(rest, opts), f.name, nil
	}
	return nil, "", formatError(head)
}

// gzipMagic starts every gzip member (RFC 1952).
var gzipMagic = []byte{0x1f, 0x8b}

// isGzip reports whether head starts a gzip file.
func isGzip(head []byte) bool { return bytes.HasPrefix(head, gzipMagic) }

// newGzipSource reads the capture inside a gzip file: any format but
// gzip again, picked by the decompressed content. Its format's name
// ends in ".gz".
func newGzipSource(r io.Reader, opts Options) (Source, string, error) {
	cr := &countingReader{r: bufio.NewReader(r)}
	zr, err := gzip.NewReader(cr)
	if err != nil {
		return nil, "", fmt.Errorf("capture: gzip: compressed byte %d: %w", cr.n, err)
	}
	br := bufio.NewReaderSize(&gzipReader{zr: zr, in: cr}, MaxLineLen)
	head, err := sniff(br)
	if err != nil && err != io.EOF {
		return nil, "", fmt.Errorf("capture: gzip: read: %w", err)
	}
	if isGzip(head) {
		return nil, "", fmt.Errorf("%w: a gzip file inside a gzip file", ErrFormat)
	}
	if isBlankText(head) {
		f := formats[0]
		return f.open(br, opts), f.name + ".gz", nil
	}
	for _, f := range formats {
		if f.detect(head) {
			return f.open(br, opts), f.name + ".gz", nil
		}
	}
	return nil, "", fmt.Errorf("gzip file: %w", formatError(head))
}

// gzipReader is a gzip stream whose errors say where it broke: the byte
// of the compressed file the decompressor had reached, and how many bytes
// it had given before, which the format's reader turns into a line or
// record.
type gzipReader struct {
	zr  *gzip.Reader
	in  *countingReader
	out int64
}

func (g *gzipReader) Read(p []byte) (int, error) {
	n, err := g.zr.Read(p)
	g.out += int64(n)
	if err != nil && err != io.EOF {
		if err == io.ErrUnexpectedEOF {
			err = fmt.Errorf("the file ends inside the compressed data: %w", err)
		}
		err = fmt.Errorf("gzip: compressed byte %d, after %d bytes decompressed: %w", g.in.n, g.out, err)
	}
	return n, err
}

// countingReader counts the bytes the decompressor took. It is an
// io.ByteReader, so the decompressor reads from it byte by byte rather
// than through a buffer of its own, and the count is where it stopped.
type countingReader struct {
	r *bufio.Reader
	n int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}

func (c *countingReader) ReadByte() (byte, error) {
	b, err := c.r.ReadByte()
	if err == nil {
		c.n++
	}
	return b, err
}

// sniff returns the head of br without consuming it: what br holds or
// could read without waiting once it has read anything, grown one read
// at a time until a format recognises it, it holds a line that is not
// blank, it is sniffLen bytes long, or the input ends (err is io.EOF).
// A read never asks for more than the next byte beyond what is buffered,
// so it returns as soon as a pipe has given anything.
func sniff(br *bufio.Reader) (head []byte, err error) {
	for n := 1; ; n = len(head) + 1 {
		head, err = br.Peek(n)
		if b := min(br.Buffered(), sniffLen); b > len(head) {
			head, _ = br.Peek(b) // already buffered: no read
		}
		if err != nil || len(head) >= sniffLen || hasLine(head) || isGzip(head) {
			return head, err
		}
		for _, f := range formats {
			if f.detect(head) {
				return head, nil
			}
		}
	}
}

// isCandump reports whether head starts as a candump log: after blank
// lines, "(" and a digit, the start of a timestamp. A line that starts
// so but is malformed further on is the Reader's to report, with its
// line and column.
func isCandump(head []byte) bool {
	line := firstLine(head)
	return len(line) >= 2 && line[0] == '(' && isDigit(line[1])
}

// firstLine returns the first line of head that is not blank, as the
// Reader reads lines, without its line ending; it may be cut short by
// the end of head.
func firstLine(head []byte) []byte {
	for len(head) > 0 {
		line, rest, _ := bytes.Cut(head, []byte{'\n'})
		if line = trimEOL(line); !isBlank(line) {
			return line
		}
		head = rest
	}
	return nil
}

// hasLine reports whether head holds a whole line that is not blank.
func hasLine(head []byte) bool {
	i := bytes.LastIndexByte(head, '\n')
	return i >= 0 && firstLine(head[:i]) != nil
}

// isBlankText reports whether b is only blank lines.
func isBlankText(b []byte) bool { return firstLine(b) == nil }

// formatError says what the head of a capture of no known format looks
// like.
func formatError(head []byte) error {
	names := make([]string, len(formats))
	for i, f := range formats {
		names[i] = f.name
	}
	return fmt.Errorf("%w: %s; known formats: %s", ErrFormat, describe(head), strings.Join(names, ", "))
}

// describe tells a user what head looks like: its first line if it is
// text, its first bytes in hex if not.
func describe(head []byte) string {
	const maxText, maxBinary = 60, 16
	line := firstLine(head)
	if line == nil {
		return "only blank lines in its first " + strconv.Itoa(len(head)) + " bytes"
	}
	if !isText(line) {
		b := head[:min(len(head), maxBinary)]
		return fmt.Sprintf("it begins with binary data % x", b)
	}
	if len(line) > maxText {
		n := maxText
		for n > 0 && !utf8.RuneStart(line[n]) {
			n--
		}
		return fmt.Sprintf("its first line begins %q", line[:n])
	}
	return fmt.Sprintf("its first line is %q", line)
}

// isText reports whether b is UTF-8 without control characters but tabs
// (it may be cut inside a character at its end).
func isText(b []byte) bool {
	for len(b) > 0 {
		r, size := utf8.DecodeRune(b)
		switch {
		case r == utf8.RuneError && size == 1:
			if len(b) >= utf8.UTFMax || utf8.FullRune(b) {
				return false
			}
			return true // a character cut by the end of the head
		case r < ' ' && r != '\t', r == 0x7F:
			return false
		}
		b = b[size:]
	}
	return true
}

// OffsetError is a malformed record of a binary capture (BLF, MDF).
type OffsetError struct {
	// Format names the capture format: "blf", "mf4".
	Format string
	// Offset is the record's byte offset in the file; for a record inside
	// a compressed container, the container's.
	Offset int64
	// Msg says what is wrong.
	Msg string
}

// Error reads like `capture: blf: byte 4096: object size 3 is below its
// header's 16`.
func (e *OffsetError) Error() string {
	return fmt.Sprintf("capture: %s: byte %d: %s", e.Format, e.Offset, e.Msg)
}
