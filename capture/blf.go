package capture

import (
	"bufio"
	"compress/zlib"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"time"

	"github.com/yukart/candec/frame"
)

// A Vector BLF file is a file header and a sequence of objects, all
// little-endian:
//
//	file header   "LOGG" | header size u32 | ... | start SYSTEMTIME @40 (8 × u16, UTC) | ...
//	object        "LOBJ" | header size u16 | header version u16 | object size u32 | type u32 | ...
//	                 then padding: s%4 bytes after most objects of size s
//	log container object header (16) | method u16 | 6 reserved | uncompressed size u32 | 4 reserved | data
//	header v1     base (16) | flags u32 | client u16 | object version u16 | timestamp u64   = 32 bytes
//	header v2     base (16) | flags u32 | status u8 | 1 | object version u16 | timestamp u64 | original u64 = 40 bytes
//
// The frames are in the data of the log containers (type 10), stored
// (method 0) or zlib-deflated (method 2). The containers' data, joined in
// file order, is one stream of objects: an object may begin in one
// container and end in the next.

// Object types the BLFReader reads; it skips every other type.
const (
	blfCANMessage     = 1
	blfLogContainer   = 10
	blfCANErrorExt    = 73
	blfCANMessage2    = 86
	blfCANFDMessage   = 100
	blfCANFDMessage64 = 101
)

// Sizes and limits of a BLF file.
const (
	blfFileHeaderMin = 72 // the fields up to the stop SYSTEMTIME
	blfFileHeaderMax = 1 << 20
	blfBaseHeader    = 16
	blfContainerHead = 32
	// blfMaxContainer caps a container's data, stored or deflated:
	// Vector's tools and python-can write 128 KiB; a larger size field is
	// corruption, or a zlib bomb.
	blfMaxContainer = 8 << 20
	// blfSyncWindow is how far past an object's end the next signature
	// is looked for: python-can accepts it at any of the 5 positions
	// after the end, whatever the padding bytes hold, since writers pad
	// differently (Vector's s%4 bytes after an object of size s, none
	// after a CAN_FD_MESSAGE_64, or to a multiple of 4).
	blfSyncWindow = 8
	// blfMaxPad is the most padding after the last object.
	blfMaxPad = 3
	// blfMaxChannel is the highest 1-based channel with a bus index.
	blfMaxChannel = 256
	blfBufSize    = 64 << 10
	// blfMaxFrameObject caps the size of the objects read as frames:
	// the largest, a CAN_FD_MESSAGE_64 with a header of version 2, is
	// 144 bytes plus an extension of a few words.
	blfMaxFrameObject = 1024
)

// Bits of the objects' fields.
const (
	blfExtendedID  = 1 << 31 // the ID's extended flag
	blfTime10us    = 1       // object flags: timestamp in 10 µs units, else ns
	blfRemote      = 0x80    // CAN_MESSAGE(2), CAN_FD_MESSAGE flags
	blfFDEDL       = 0x1     // CAN_FD_MESSAGE fd flags
	blfFDBRS       = 0x2     //
	blfFDESI       = 0x4     //
	blfFD64Remote  = 0x0010  // CAN_FD_MESSAGE_64 flags
	blfFD64FDF     = 0x1000  //
	blfFD64BRS     = 0x2000  //
	blfFD64ESI     = 0x4000  //
	blfCompStored  = 0
	blfCompDeflate = 2
)

// Sizes of the object bodies after the object header.
const (
	blfCANMessageBody   = 16 // channel u16, flags u8, dlc u8, id u32, data [8]
	blfCANFDMessageBody = 84 // channel u16, flags u8, dlc u8, id u32, frame length u32, bit count u8, fd flags u8, valid u8, 5 reserved, data [64]
	blfCANFD64Body      = 40 // channel u8, dlc u8, valid u8, tx count u8, id u32, frame length u32, flags u32, 4 × u32, bit count u16, dir u8, ext offset u8, crc u32; data follows
	blfCANErrorExtBody  = 32 // channel u16, length u16, flags u32, ecc u8, position u8, dlc u8, 1, frame length u32, id u32, flags ext u16, 2, data [8]
)

// detectBLF reports whether head, the first bytes of a file, is a BLF
// file: it starts with "LOGG" and, when there are 8 bytes, a header size
// the reader accepts.
func detectBLF(head []byte) bool {
	if len(head) < 4 || string(head[:4]) != "LOGG" {
		return false
	}
	if len(head) < 8 {
		return true
	}
	n := binary.LittleEndian.Uint32(head[4:])
	return n >= blfFileHeaderMin && n <= blfFileHeaderMax
}

// BLFReader reads frames from a Vector BLF file (binary logging format),
// as python-can's BLFReader reads them: the CAN_MESSAGE, CAN_MESSAGE2,
// CAN_FD_MESSAGE and CAN_FD_MESSAGE_64 objects as frames and the
// CAN_ERROR_EXT objects as error frames (frame.Error); every other object
// is skipped. It streams with constant memory and allocates nothing per
// frame. It is not safe for concurrent use.
type BLFReader struct {
	src     *bufio.Reader
	off     int64 // file offset of src's next byte
	opts    Options
	started bool
	start   int64 // the header's start time, ns since the Unix epoch
	err     error // a fatal error, returned by every later call
	skipped int
	names   [256]string

	// The stream of container data: buf[pos:end] is read and not yet
	// consumed; segs say which container each part of it comes from.
	buf      []byte
	pos, end int
	segs     []blfSeg

	// The container being read.
	cont    blfContainer
	inCont  bool
	zr      io.ReadCloser
	payload limitedByteReader
}

// blfSeg is a run of buf from one container: buf[at] is the byte at
// offset within of the container's data.
type blfSeg struct {
	at     int
	cont   int64
	within int64
	zipped bool
}

// blfContainer is the log container being read.
type blfContainer struct {
	off    int64 // file offset of its object header
	size   int64 // its data in the file (stored or deflated)
	left   int64 // stored: data bytes still in the file
	within int64 // data bytes read so far (after inflation)
	zipped bool
}

// NewBLFReader returns a BLFReader that reads a BLF file from r. It reads
// nothing until the first Next.
func NewBLFReader(r io.Reader, opts Options) *BLFReader {
	return &BLFReader{
		src:  bufio.NewReaderSize(r, blfBufSize),
		opts: opts,
		buf:  make([]byte, blfBufSize),
	}
}

var _ Source = (*BLFReader)(nil)

// Skipped returns how many malformed objects and containers were skipped
// (Options.SkipInvalid).
func (r *BLFReader) Skipped() int { return r.skipped }

// Interface returns "can<bus>" for a bus a frame came on, or "".
func (r *BLFReader) Interface(bus uint8) string { return r.names[bus] }

// Next overwrites *f with the next frame. It returns io.EOF after the
// last one and a *OffsetError for bad input. After an *OffsetError for
// one malformed object (a bad channel, a short body, an ID or timestamp
// out of range), Next may be called again to go on with the next object;
// with Options.SkipInvalid such objects are skipped and counted instead.
// Any other error (a broken file structure, corrupt compressed data, a
// cut file) ends the stream: Next returns it again.
func (r *BLFReader) Next(f *frame.Frame) error {
	if r.err != nil {
		return r.err
	}
	if !r.started {
		if err := r.readFileHeader(); err != nil {
			r.err = err
			return err
		}
		r.started = true
	}
	for {
		ok, err := r.object(f)
		if ok {
			return nil
		}
		if err == nil {
			continue // a skipped object
		}
		var bad *objectError
		if errors.As(err, &bad) {
			if r.opts.SkipInvalid {
				r.skipped++
				continue
			}
			return bad.OffsetError
		}
		r.err = err
		return err
	}
}

// objectError is a malformed object the reader has stepped over: the
// stream can go on after it.
type objectError struct{ *OffsetError }

func (r *BLFReader) errAt(off int64, format string, args ...any) *OffsetError {
	return &OffsetError{Format: "blf", Offset: off, Msg: fmt.Sprintf(format, args...)}
}

// readFileHeader reads the file header up to the first object.
func (r *BLFReader) readFileHeader() error {
	h, err := r.src.Peek(blfFileHeaderMin)
	if len(h) < 4 || string(h[:4]) != "LOGG" {
		if len(h) == 0 && err != nil && err != io.EOF {
			return err
		}
		return r.errAt(0, "no BLF file signature \"LOGG\"")
	}
	if len(h) < blfFileHeaderMin {
		return r.ioErr(err, 0, "file header cut short at byte %d", len(h))
	}
	size := binary.LittleEndian.Uint32(h[4:])
	if size < blfFileHeaderMin || size > blfFileHeaderMax {
		return r.errAt(4, "file header size %d is outside %d to %d", size, blfFileHeaderMin, blfFileHeaderMax)
	}
	start, msg := systemTime(h[40:56])
	if msg != "" {
		return r.errAt(40, "start time: %s", msg)
	}
	r.start = start
	n, err := r.src.Discard(int(size))
	r.off += int64(n)
	if n < int(size) {
		return r.ioErr(err, r.off, "file header of %d bytes cut short", size)
	}
	return nil
}

// ioErr is an error for a file that ended (or failed) too early.
func (r *BLFReader) ioErr(err error, off int64, format string, args ...any) error {
	if err != nil && err != io.EOF && err != io.ErrUnexpectedEOF && err != bufio.ErrBufferFull {
		return fmt.Errorf("capture: blf: byte %d: %w", off, err)
	}
	return r.errAt(off, format, args...)
}

// systemTime returns a Windows SYSTEMTIME (year, month, day of week, day,
// hour, minute, second, millisecond; taken as UTC) in ns since the Unix
// epoch. An all-zero SYSTEMTIME, as python-can writes when it has no
// start time, is 0: the frames' times are then offsets from the start.
func systemTime(b []byte) (int64, string) {
	var v [8]int
	zero := true
	for i := range v {
		v[i] = int(binary.LittleEndian.Uint16(b[2*i:]))
		zero = zero && v[i] == 0
	}
	if zero {
		return 0, ""
	}
	year, month, day, hour, min, sec, ms := v[0], v[1], v[3], v[4], v[5], v[6], v[7]
	switch {
	case year < 1970 || year > 2261:
		return 0, fmt.Sprintf("year %d is outside 1970 to 2261", year)
	case month < 1 || month > 12:
		return 0, fmt.Sprintf("month %d", month)
	case day < 1 || day > time.Date(year, time.Month(month)+1, 0, 0, 0, 0, 0, time.UTC).Day():
		return 0, fmt.Sprintf("day %d of month %d", day, month)
	case hour > 23 || min > 59 || sec > 59 || ms > 999:
		return 0, fmt.Sprintf("time of day %d:%d:%d.%d", hour, min, sec, ms)
	}
	t := time.Date(year, time.Month(month), day, hour, min, sec, ms*int(time.Millisecond), time.UTC)
	return t.UnixNano(), ""
}

// object reads the next object of the container stream. It returns true
// when it has filled *f with a frame; false and nil for an object it
// skips; an *objectError for a malformed object it has stepped over.
func (r *BLFReader) object(f *frame.Frame) (bool, error) {
	if done, err := r.sync(); done || err != nil {
		if done {
			return false, io.EOF
		}
		return false, err
	}
	// The signature is at pos; the object starts there.
	if err := r.need(blfBaseHeader); err != nil {
		return false, r.cut(err, blfBaseHeader)
	}
	h := r.buf[r.pos:]
	hver := binary.LittleEndian.Uint16(h[6:])
	size := binary.LittleEndian.Uint32(h[8:])
	typ := binary.LittleEndian.Uint32(h[12:])
	if size < blfBaseHeader {
		return false, r.at(r.pos, "object size %d is below its header's %d", size, blfBaseHeader)
	}
	body := blfBody(typ)
	if body < 0 {
		return false, r.skip(size, nil)
	}
	var hlen int
	switch hver {
	case 1:
		hlen = 32
	case 2:
		hlen = 40
	default:
		return false, r.skip(size, r.at(r.pos, "object type %d: header version %d, want 1 or 2", typ, hver))
	}
	if hsize := int(binary.LittleEndian.Uint16(h[4:])); hsize != hlen {
		return false, r.skip(size, r.at(r.pos, "object type %d: header size %d, want %d for header version %d", typ, hsize, hlen, hver))
	}
	if int64(size) < int64(hlen+body) {
		return false, r.skip(size, r.at(r.pos, "object type %d: size %d is below its header and body's %d", typ, size, hlen+body))
	}
	if size > blfMaxFrameObject {
		return false, r.skip(size, r.at(r.pos, "object type %d: size %d is above the %d of any frame object", typ, size, blfMaxFrameObject))
	}
	// A frame object is read whole, so that a cut one gives no frame.
	if err := r.need(int(size)); err != nil {
		return false, r.cut(err, int(size))
	}
	h = r.buf[r.pos : r.pos+int(size)]
	t, ok := r.objectTime(h)
	if !ok {
		return false, r.skip(size, r.at(r.pos, "timestamp %d does not fit in ns since 1970", binary.LittleEndian.Uint64(h[24:])))
	}
	d := h[hlen : hlen+body]
	var msg string
	switch typ {
	case blfCANMessage, blfCANMessage2:
		msg = r.classic(f, d)
	case blfCANFDMessage:
		msg = r.fd(f, d)
	case blfCANFDMessage64:
		msg = r.fd64Object(f, h, hlen, body)
	case blfCANErrorExt:
		msg = r.errorFrame(f, d)
	}
	if msg != "" {
		return false, r.skip(size, r.at(r.pos, "%s", msg))
	}
	f.Time = t
	r.consume(int(size))
	return true, nil
}

// blfBody is the body size of a frame object of type typ; -1 for an
// object that holds no frame.
func blfBody(typ uint32) int {
	switch typ {
	case blfCANMessage, blfCANMessage2:
		return blfCANMessageBody
	case blfCANFDMessage:
		return blfCANFDMessageBody
	case blfCANFDMessage64:
		return blfCANFD64Body
	case blfCANErrorExt:
		return blfCANErrorExtBody
	}
	return -1
}

// fd64Object reads the CAN_FD_MESSAGE_64 object h (its header hlen
// bytes, its fixed body body bytes) into f; it returns what is wrong
// with it, or "".
func (r *BLFReader) fd64Object(f *frame.Frame, h []byte, hlen, body int) string {
	d := h[hlen : hlen+body]
	valid := int(d[2])
	if valid > frame.MaxLen {
		return fmt.Sprintf("CAN_FD_MESSAGE_64: %d valid data bytes, at most %d", valid, frame.MaxLen)
	}
	// The data field ends at the extension (ext data offset, from the
	// object's start) or the object's end, and may hold fewer than the
	// valid bytes: the rest are zero, as CANoe and python-can have them.
	end := int64(len(h))
	if ext := int64(d[35]); ext != 0 && ext < end {
		end = ext
	}
	n := min(int64(valid), max(0, end-int64(hlen+body)))
	return r.fd64(f, h[hlen:hlen+body+int(n)], valid)
}

// objectTime returns the time of the object whose header starts h: the
// file's start time plus the timestamp, in 10 µs units when the flags
// are exactly 1 (python-can's test) and in ns otherwise.
func (r *BLFReader) objectTime(h []byte) (int64, bool) {
	flags := binary.LittleEndian.Uint32(h[16:])
	ts := binary.LittleEndian.Uint64(h[24:])
	unit := uint64(1)
	if flags == blfTime10us {
		unit = 10000
	}
	if ts > uint64(math.MaxInt64-r.start)/unit {
		return 0, false
	}
	return r.start + int64(ts*unit), true
}

// bus sets f.Bus from a 1-based channel, or says why it cannot.
func (r *BLFReader) bus(f *frame.Frame, ch int) string {
	if ch < 1 || ch > blfMaxChannel {
		return fmt.Sprintf("channel %d is outside 1 to %d", ch, blfMaxChannel)
	}
	f.Bus = uint8(ch - 1)
	if r.names[f.Bus] == "" {
		r.names[f.Bus] = "can" + strconv.Itoa(int(f.Bus))
	}
	return ""
}

// setID sets f.ID and the Extended flag from an object's ID field.
func setID(f *frame.Frame, id uint32) string {
	f.ID = id &^ blfExtendedID
	if id&blfExtendedID != 0 {
		f.Flags |= frame.Extended
		if f.ID > 0x1FFFFFFF {
			return fmt.Sprintf("29-bit ID %#x above 0x1FFFFFFF", f.ID)
		}
	} else if f.ID > 0x7FF {
		return fmt.Sprintf("11-bit ID %#x above 0x7FF", f.ID)
	}
	return ""
}

// setData sets f.Len and f.Data from data and zeroes the rest.
func setData(f *frame.Frame, data []byte) {
	n := copy(f.Data[:], data)
	clear(f.Data[n:])
	f.Len = uint8(n)
}

// remote makes f a remote frame with the classic DLC dlc (at most 8).
func remote(f *frame.Frame, dlc uint8) {
	f.Flags |= frame.Remote
	clear(f.Data[:])
	f.Len = min(dlc, 8)
}

// classic reads a CAN_MESSAGE or CAN_MESSAGE2 body. A DLC above 8 gives
// the 8 data bytes, as python-can keeps them.
func (r *BLFReader) classic(f *frame.Frame, d []byte) string {
	f.Flags = 0
	if msg := setID(f, binary.LittleEndian.Uint32(d[4:])); msg != "" {
		return msg
	}
	if msg := r.bus(f, int(binary.LittleEndian.Uint16(d))); msg != "" {
		return msg
	}
	if d[2]&blfRemote != 0 {
		remote(f, d[3])
		return ""
	}
	setData(f, d[8:8+min(d[3], 8)])
	return ""
}

// fd reads a CAN_FD_MESSAGE body: its data are the valid data bytes (at
// most 8 when the EDL bit says it is a classic frame).
func (r *BLFReader) fd(f *frame.Frame, d []byte) string {
	f.Flags = 0
	if msg := setID(f, binary.LittleEndian.Uint32(d[4:])); msg != "" {
		return msg
	}
	fl, fdfl, valid := d[2], d[13], int(d[14])
	if valid > frame.MaxLen {
		return fmt.Sprintf("CAN_FD_MESSAGE: %d valid data bytes, at most %d", valid, frame.MaxLen)
	}
	if msg := r.bus(f, int(binary.LittleEndian.Uint16(d))); msg != "" {
		return msg
	}
	return fdFrame(f, fl&blfRemote != 0, fdfl&blfFDEDL != 0, fdfl&blfFDBRS != 0, fdfl&blfFDESI != 0, d[3], d[20:20+valid])
}

// fd64 reads a CAN_FD_MESSAGE_64 body and the data bytes after it, of
// which there are valid (the missing ones zero).
func (r *BLFReader) fd64(f *frame.Frame, d []byte, valid int) string {
	f.Flags = 0
	if msg := setID(f, binary.LittleEndian.Uint32(d[4:])); msg != "" {
		return msg
	}
	if msg := r.bus(f, int(d[0])); msg != "" {
		return msg
	}
	fl := binary.LittleEndian.Uint32(d[12:])
	var data [frame.MaxLen]byte
	copy(data[:], d[blfCANFD64Body:])
	return fdFrame(f, fl&blfFD64Remote != 0, fl&blfFD64FDF != 0, fl&blfFD64BRS != 0, fl&blfFD64ESI != 0, d[1], data[:valid])
}

// fdFrame fills f from an FD object's fields. A remote frame is a
// classic one (CAN FD has none), its DLC the object's; a frame without
// the FD bit is classic, with at most 8 data bytes.
func fdFrame(f *frame.Frame, rtr, isFD, brs, esi bool, dlc uint8, data []byte) string {
	switch {
	case rtr:
		remote(f, dlc)
	case !isFD:
		setData(f, data[:min(len(data), 8)])
	default:
		f.Flags |= frame.FD
		if brs {
			f.Flags |= frame.BRS
		}
		if esi {
			f.Flags |= frame.ESI
		}
		setData(f, data)
	}
	return ""
}

// errorFrame reads a CAN_ERROR_EXT body as an error frame. BLF's error
// details (error code, position, the frame on the bus) have no place in
// candump's error classes, so the frame has ID 0 and no data. An error
// frame whose channel has no bus index still comes out, on bus 255:
// dropping it would hide the error, and it carries nothing to decode.
func (r *BLFReader) errorFrame(f *frame.Frame, d []byte) string {
	f.Flags = frame.Error
	f.ID = 0
	setData(f, nil)
	if r.bus(f, int(binary.LittleEndian.Uint16(d))) != "" {
		r.bus(f, blfMaxChannel)
	}
	return ""
}

// sync finds the next object's signature after the one that ended at
// pos, skipping its padding. It reports done at a clean end of the
// stream: nothing, or only padding, after the last object.
func (r *BLFReader) sync() (done bool, err error) {
	err = r.need(blfSyncWindow)
	if err != nil && err != io.EOF {
		return false, err
	}
	b := r.buf[r.pos:r.end]
	if len(b) > blfSyncWindow {
		b = b[:blfSyncWindow]
	}
	if i := findLOBJ(b); i >= 0 {
		r.consume(i)
		return false, nil
	}
	if len(b) == blfSyncWindow {
		return false, r.at(r.pos, "no object signature \"LOBJ\" after the object's end")
	}
	if len(b) <= blfMaxPad {
		r.consume(len(b))
		return true, nil
	}
	return false, r.at(r.pos, "the data ends with %d bytes that are not an object", len(b))
}

// findLOBJ returns where "LOBJ" starts within the first 5 bytes of b, or
// -1.
func findLOBJ(b []byte) int {
	for i := 0; i <= 4 && i+4 <= len(b); i++ {
		if b[i] == 'L' && b[i+1] == 'O' && b[i+2] == 'B' && b[i+3] == 'J' {
			return i
		}
	}
	return -1
}

// at returns an error for the object at buf[i].
func (r *BLFReader) at(i int, format string, args ...any) *OffsetError {
	off, within, zipped := r.loc(i)
	if zipped {
		return r.errAt(off, "object at byte %d of the compressed container's data: %s", within, fmt.Sprintf(format, args...))
	}
	return r.errAt(off, format, args...)
}

// loc returns where buf[i] is in the file: its own offset in a stored
// container; the container's offset and its offset in the container's
// data when the container is compressed.
func (r *BLFReader) loc(i int) (off, within int64, zipped bool) {
	s := blfSeg{cont: r.off}
	for _, g := range r.segs {
		if g.at > i {
			break
		}
		s = g
	}
	within = s.within + int64(i-s.at)
	if s.zipped {
		return s.cont, within, true
	}
	return s.cont + blfContainerHead + within, within, false
}

// cut is the error for an object of size bytes at pos that the stream
// ends inside of, given need's error.
func (r *BLFReader) cut(err error, size int) error {
	if err != io.EOF {
		return err
	}
	return r.at(r.pos, "object of %d bytes cut short: the data ends after %d", size, r.end-r.pos)
}

// skip steps over the object of size bytes at pos and returns bad as an
// *objectError, or the error that kept it from stepping over.
func (r *BLFReader) skip(size uint32, bad *OffsetError) error {
	start := r.pos
	n := int64(size)
	if n <= int64(r.end-r.pos) {
		r.consume(int(n))
	} else {
		// A large object runs past what is buffered (and maybe across
		// many containers): drop it as it comes. Its location is kept
		// first, since the buffer moves on.
		off, within, zipped := r.loc(start)
		for n > 0 {
			if r.pos == r.end {
				if err := r.fill(); err != nil {
					if err != io.EOF {
						return err
					}
					if zipped {
						return r.errAt(off, "object at byte %d of the compressed container's data: object of %d bytes cut short", within, size)
					}
					return r.errAt(off, "object of %d bytes cut short", size)
				}
			}
			k := min(n, int64(r.end-r.pos))
			r.consume(int(k))
			n -= k
		}
	}
	if bad != nil {
		return &objectError{bad}
	}
	return nil
}

func (r *BLFReader) consume(n int) { r.pos += n }

// need makes buf[pos:pos+n] hold n bytes of the stream (n ≤ len(buf)),
// or returns io.EOF at the stream's end, or another error.
func (r *BLFReader) need(n int) error {
	for r.end-r.pos < n {
		if err := r.fill(); err != nil {
			return err
		}
	}
	return nil
}

// fill reads more container data into buf. It returns io.EOF after the
// last container.
func (r *BLFReader) fill() error {
	if r.pos > 0 && (r.pos == r.end || r.end == len(r.buf)) {
		r.compact()
	}
	for {
		if !r.inCont {
			if err := r.nextContainer(); err != nil {
				return err
			}
			r.inCont = true
		}
		n, err := r.readContainer(r.buf[r.end:])
		if n > 0 {
			if k := len(r.segs); k == 0 || r.segs[k-1].cont != r.cont.off {
				r.segs = append(r.segs, blfSeg{at: r.end, cont: r.cont.off, within: r.cont.within, zipped: r.cont.zipped})
			}
			r.end += n
			r.cont.within += int64(n)
			return nil
		}
		if err == io.EOF {
			if err := r.endContainer(); err != nil {
				return err
			}
			continue
		}
		return err
	}
}

// compact moves buf[pos:end] to the front.
func (r *BLFReader) compact() {
	k := 0
	for k+1 < len(r.segs) && r.segs[k+1].at <= r.pos {
		k++
	}
	segs := r.segs[k:]
	if len(segs) > 0 && segs[0].at < r.pos {
		segs[0].within += int64(r.pos - segs[0].at)
		segs[0].at = r.pos
	}
	for i := range segs {
		segs[i].at -= r.pos
	}
	r.segs = r.segs[:copy(r.segs, segs)]
	r.end = copy(r.buf, r.buf[r.pos:r.end])
	r.pos = 0
}

// readContainer reads data of the current container into p; io.EOF at
// its end.
func (r *BLFReader) readContainer(p []byte) (int, error) {
	c := &r.cont
	if !c.zipped {
		if c.left == 0 {
			return 0, io.EOF
		}
		if int64(len(p)) > c.left {
			p = p[:c.left]
		}
		n, err := r.src.Read(p)
		r.off += int64(n)
		c.left -= int64(n)
		if n == 0 && err != nil {
			return 0, r.ioErr(err, c.off, "the file ends at byte %d, inside this container's %d bytes of data", r.off, c.size)
		}
		return n, nil
	}
	n, err := r.zr.Read(p)
	if c.within+int64(n) > blfMaxContainer {
		return 0, r.errAt(c.off, "compressed container inflates to more than %d bytes", blfMaxContainer)
	}
	if n > 0 || err == nil {
		return n, nil
	}
	if err == io.EOF {
		return 0, io.EOF
	}
	return 0, r.zipErr(err)
}

// zipErr is the error for the current compressed container's stream.
func (r *BLFReader) zipErr(err error) error {
	r.off = r.payload.off
	if r.payload.short {
		return r.ioErr(r.payload.err, r.cont.off, "the file ends at byte %d, inside this compressed container's %d bytes (%d bytes of data inflated)", r.off, r.cont.size, r.cont.within)
	}
	return r.errAt(r.cont.off, "compressed container: byte %d of its data: %v", r.cont.within, err)
}

// endContainer steps over what is left of the current container.
func (r *BLFReader) endContainer() error {
	r.inCont = false
	if r.cont.zipped {
		// The deflate stream may end before the container's data does.
		r.off = r.payload.off
		n, err := r.src.Discard(int(r.payload.n))
		r.off += int64(n)
		if int64(n) < r.payload.n {
			return r.ioErr(err, r.cont.off, "the file ends at byte %d, inside this compressed container's %d bytes", r.off, r.cont.size)
		}
	}
	return nil
}

// nextContainer reads top-level objects up to the next log container and
// its header. It returns io.EOF at the end of the file.
func (r *BLFReader) nextContainer() error {
	for {
		p, err := r.src.Peek(blfSyncWindow)
		if len(p) == 0 && err != nil && err != io.EOF {
			return fmt.Errorf("capture: blf: byte %d: %w", r.off, err)
		}
		i := findLOBJ(p)
		if i < 0 {
			switch {
			case len(p) == blfSyncWindow:
				return r.errAt(r.off, "no object signature \"LOBJ\"")
			case len(p) <= blfMaxPad:
				return io.EOF
			}
			return r.ioErr(err, r.off, "the file ends with %d bytes that are not an object", len(p))
		}
		r.discard(i)
		h, err := r.src.Peek(blfBaseHeader)
		if len(h) < blfBaseHeader {
			return r.ioErr(err, r.off, "object header cut short")
		}
		size := int64(binary.LittleEndian.Uint32(h[8:]))
		typ := binary.LittleEndian.Uint32(h[12:])
		if size < blfBaseHeader {
			return r.errAt(r.off, "object size %d is below its header's %d", size, blfBaseHeader)
		}
		if typ != blfLogContainer {
			off := r.off
			if n := r.discard(int(size)); int64(n) < size {
				return r.errAt(off, "object of %d bytes cut short: the file ends after %d", size, n)
			}
			continue
		}
		if size < blfContainerHead {
			return r.errAt(r.off, "log container size %d is below its header's %d", size, blfContainerHead)
		}
		h, err = r.src.Peek(blfContainerHead)
		if len(h) < blfContainerHead {
			return r.ioErr(err, r.off, "log container header cut short")
		}
		method := binary.LittleEndian.Uint16(h[16:])
		usize := binary.LittleEndian.Uint32(h[24:])
		data := size - blfContainerHead
		c := blfContainer{off: r.off, size: data, left: data, zipped: method == blfCompDeflate}
		switch {
		case data > blfMaxContainer+blfMaxContainer/64:
			return r.errAt(c.off, "log container of %d bytes, more than the %d accepted", data, blfMaxContainer)
		case usize > blfMaxContainer:
			return r.errAt(c.off, "log container of %d bytes uncompressed, more than the %d accepted", usize, blfMaxContainer)
		}
		r.discard(blfContainerHead)
		switch method {
		case blfCompStored:
			r.cont = c
			return nil
		case blfCompDeflate:
			r.cont = c
			return r.startInflate()
		}
		if !r.opts.SkipInvalid {
			return r.errAt(c.off, "log container compression method %d, want 0 (stored) or 2 (zlib)", method)
		}
		r.skipped++
		if n := r.discard(int(data)); int64(n) < data {
			return r.errAt(c.off, "log container of %d bytes cut short", size)
		}
	}
}

// discard drops n bytes of the file and returns how many it dropped.
func (r *BLFReader) discard(n int) int {
	k, _ := r.src.Discard(n)
	r.off += int64(k)
	return k
}

// startInflate starts reading the current container's deflated data,
// reusing the zlib reader.
func (r *BLFReader) startInflate() error {
	r.payload = limitedByteReader{r: r.src, n: r.cont.size, off: r.off}
	var err error
	if r.zr == nil {
		r.zr, err = zlib.NewReader(&r.payload)
	} else {
		err = r.zr.(zlib.Resetter).Reset(&r.payload, nil)
	}
	if err != nil {
		return r.zipErr(err)
	}
	return nil
}

// limitedByteReader reads at most n bytes from r. It is an io.ByteReader
// so that zlib reads through it without a buffer of its own.
type limitedByteReader struct {
	r     *bufio.Reader
	n     int64
	off   int64 // file offset of the next byte
	short bool  // the file ended (or failed) before n bytes
	err   error
}

func (l *limitedByteReader) Read(p []byte) (int, error) {
	if l.n <= 0 {
		return 0, io.EOF
	}
	if int64(len(p)) > l.n {
		p = p[:l.n]
	}
	n, err := l.r.Read(p)
	l.n -= int64(n)
	l.off += int64(n)
	if n == 0 && err != nil {
		l.short, l.err = true, err
		return 0, io.ErrUnexpectedEOF
	}
	return n, nil
}

func (l *limitedByteReader) ReadByte() (byte, error) {
	if l.n <= 0 {
		return 0, io.EOF
	}
	b, err := l.r.ReadByte()
	if err != nil {
		l.short, l.err = true, err
		return 0, io.ErrUnexpectedEOF
	}
	l.n--
	l.off++
	return b, nil
}
