package capture

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"strconv"

	"github.com/yukart/candec/frame"
)

// MF4Reader reads the CAN frames of an ASAM MDF 4 bus-logging file (as
// CANedge loggers and asammdf write them): the records of every channel
// group of CAN_DataFrame, CAN_RemoteFrame and CAN_ErrorFrame channels, in
// the order they are in the file. See docs/capture-mf4.md.
//
// MDF needs random access (the blocks link to each other by file
// offset): an input that is an io.ReaderAt and an io.Seeker (an
// *os.File, a *bytes.Reader) is read in place from its current position;
// any other input is first copied to a temporary file, removed when the
// reader reaches the end, fails or is closed. It is not safe for
// concurrent use.
type MF4Reader struct {
	in   io.Reader
	opts Options

	ra    io.ReaderAt
	size  int64
	spool *os.File
	// spoolName is the temporary file to remove at Close, when removing
	// it while open is not possible (Windows).
	spoolName string

	opened bool
	err    error // sticky: io.EOF or the error that ended the reading

	unfinished bool
	// tail is the error of a record cut by the end of an unfinalized
	// file, returned once the other data groups are read.
	tail  error
	start int64 // the header's start time, ns since 1970 UTC
	dgs   []*mf4DG

	// Reading the metadata.
	visits, frags int
	seen          map[int64]bool
	last          struct { // the DT block latest in the file
		s         *mf4Stream
		i         int
		off, size int64
	}

	dg  int        // index of the data group being read
	cur *mf4Cursor // its record cursor

	dz     [2]mf4Inflated
	dzNext int

	skipped int
	names   [256]string
}

var _ Source = (*MF4Reader)(nil)

// NewMF4Reader returns an MF4Reader that reads an MDF 4 file from r. It
// reads nothing until the first Next; errors opening the file come from
// Next.
func NewMF4Reader(r io.Reader, opts Options) *MF4Reader {
	return &MF4Reader{in: r, opts: opts}
}

// detectMF4 reports whether head starts an MDF 4 file: the
// identification block of a finalized ("MDF     ") or unfinalized
// ("UnFinMF ") file, format version "4.".
func detectMF4(head []byte) bool {
	return len(head) >= 10 &&
		(bytes.HasPrefix(head, []byte("MDF     ")) || bytes.HasPrefix(head, []byte("UnFinMF "))) &&
		string(head[8:10]) == "4."
}

// mf4DG is a data group: its record stream and channel groups.
type mf4DG struct {
	off    int64
	idSize int
	byID   map[uint64]*mf4Group
	only   *mf4Group // with record id size 0, the one group
	stream *mf4Stream
}

// mf4Group is a channel group.
type mf4Group struct {
	off   int64
	recID uint64
	kind  uint8
	size  int    // record bytes after the record id (data + invalidation)
	index uint64 // records read: the raw value of virtual channels

	time                                      mf4Time
	bus, id, ide, dlc, dataLen, edl, brs, esi mf4Field
	data                                      mf4Bytes

	// A VLSD group, as the record cursor passes its records: the signal
	// data offset of its next record, and of the last one with the
	// record's stream position.
	vNext    uint64
	vLast    uint64
	vLastPos int64
	vHas     bool
	scan     *mf4Cursor // looks ahead for the record of an offset
	scanNext uint64     // signal data offset of the record at scan
}

// mf4Field is an integer member of a frame: bits of the record, or a
// virtual channel (the record's index), through a conversion.
type mf4Field struct {
	ok, virtual, bigEndian bool
	byteOff                int
	bitOff, bits           uint8
	conv                   mf4Conv
}

// mf4Conv is a conversion: identity, linear (a + b x) or a value table.
type mf4Conv struct {
	kind       uint8
	a, b       float64
	keys, vals []float64
}

// mf4Time is the master channel: seconds = a + b raw, kept as ns.
type mf4Time struct {
	ok, virtual, float, signed bool
	f                          mf4Field
	k                          int64   // ns a raw step, when whole; else 0
	scale                      float64 // ns a raw step
	offNs                      int64
}

// Where a frame's data bytes are.
const (
	mf4BytesNone  = iota
	mf4BytesFixed // in the record
	mf4BytesVLSD  // in a VLSD channel group, at the offset in the record
	mf4BytesSD    // in a signal data stream, at the offset in the record
)

type mf4Bytes struct {
	mode     uint8
	byteOff  int      // fixed: where the bytes are
	n        int      // fixed: how many
	off      mf4Field // VLSD, SD: where the offset is
	cn, link int64    // the channel, and its data link
	vlsd     *mf4Group
	sd       *mf4Stream
	sdc      *mf4Cursor
}

// Skipped returns how many malformed records were skipped
// (Options.SkipInvalid).
func (m *MF4Reader) Skipped() int { return m.skipped }

// Interface returns "can<bus>" once a frame had the bus: bus channel c
// of the file is bus c-1.
func (m *MF4Reader) Interface(bus uint8) string { return m.names[bus] }

// Close removes the temporary copy of a non-seekable input, if any. It
// does not close the io.Reader given to NewMF4Reader.
func (m *MF4Reader) Close() error {
	if m.spool == nil {
		return nil
	}
	err := m.spool.Close()
	if m.spoolName != "" {
		if rerr := os.Remove(m.spoolName); err == nil {
			err = rerr
		}
	}
	m.spool = nil
	return err
}

// fail ends the reading with err and frees the temporary copy.
func (m *MF4Reader) fail(err error) error {
	m.err = err
	m.Close()
	return err
}

// init finds random access to the input and reads the metadata.
func (m *MF4Reader) init() error {
	if rs, ok := m.in.(interface {
		io.ReaderAt
		io.Seeker
	}); ok {
		base, err := rs.Seek(0, io.SeekCurrent)
		if err != nil {
			return fmt.Errorf("capture: mf4: %w", err)
		}
		end, err := rs.Seek(0, io.SeekEnd)
		if err != nil {
			return fmt.Errorf("capture: mf4: %w", err)
		}
		m.ra, m.size = io.NewSectionReader(rs, base, end-base), end-base
		return m.open()
	}
	tmp, err := os.CreateTemp("", "candec-mf4-*")
	if err != nil {
		return fmt.Errorf("capture: mf4: input is not seekable, and no temporary copy: %w", err)
	}
	m.spool = tmp
	// Removed now where the system allows it, it disappears with the
	// process whatever happens.
	if os.Remove(tmp.Name()) != nil {
		m.spoolName = tmp.Name()
	}
	n, err := io.Copy(tmp, m.in)
	if err != nil {
		return fmt.Errorf("capture: mf4: copy the input to a temporary file: %w", err)
	}
	m.ra, m.size = tmp, n
	return m.open()
}

// Next overwrites *f with the next frame. It returns io.EOF after the
// last one, a *OffsetError for a malformed record (unless
// Options.SkipInvalid; Next may then be called again) or for a file it
// cannot read on (every later call returns it again).
func (m *MF4Reader) Next(f *frame.Frame) error {
	if m.err != nil {
		return m.err
	}
	if !m.opened {
		m.opened = true
		if err := m.init(); err != nil {
			return m.fail(err)
		}
	}
	for {
		dg, err := m.nextDataGroup()
		if err != nil {
			return err
		}
		if got, err := m.record(f, dg); got || err != nil {
			return err
		}
	}
}

// nextDataGroup returns the data group whose cursor (m.cur) has records
// left, moving past the groups read to their end; after the last, the
// end of the file or what cut it short.
func (m *MF4Reader) nextDataGroup() (*mf4DG, error) {
	for {
		if m.cur == nil {
			if m.dg >= len(m.dgs) {
				if m.tail != nil {
					return nil, m.fail(m.tail)
				}
				return nil, m.fail(io.EOF)
			}
			m.cur = newMF4Cursor(m, m.dgs[m.dg].stream)
		}
		dg := m.dgs[m.dg]
		if m.cur.pos() < dg.stream.size {
			return dg, nil
		}
		if dg.stream.cut >= 0 {
			return nil, m.fail(m.errAt(dg.stream.cut, "the file ends inside the data of data group %d", dg.off))
		}
		m.dg++
		m.cur = nil
	}
}

// record reads the record at dg's cursor into f and says whether it was
// a frame; a record of another kind (VLSD, another channel group) or
// one skipped as invalid is passed over with got false and no error.
func (m *MF4Reader) record(f *frame.Frame, dg *mf4DG) (got bool, err error) {
	c := m.cur
	pos := c.pos()
	g := dg.only
	hdr := dg.idSize
	if hdr > 0 {
		b, err := c.peek(hdr)
		if err != nil {
			return false, m.partial(dg, pos, err)
		}
		id := uint64(b[0])
		if hdr > 1 {
			id = leUint(b)
		}
		if g = dg.byID[id]; g == nil {
			return false, m.fail(m.errAt(dg.stream.fileOffset(pos), "record id %d of no channel group", id))
		}
	}
	switch g.kind {
	case mf4VLSD:
		return false, m.skipVLSD(dg, g, hdr, pos)
	case mf4Other:
		if !c.skip(int64(hdr + g.size)) {
			return false, m.partial(dg, pos, io.EOF)
		}
		return false, nil
	}
	rec, err := c.peek(hdr + g.size)
	if err != nil {
		return false, m.partial(dg, pos, err)
	}
	rec = rec[hdr:]
	c.skip(int64(hdr + g.size))
	idx := g.index
	g.index++
	err = m.frame(f, g, rec, idx, c.pos())
	if err == nil {
		return true, nil
	}
	if err == errMF4End {
		return false, m.partial(dg, pos, io.EOF)
	}
	var bad *mf4BadRecord
	if !errors.As(err, &bad) {
		return false, m.fail(err)
	}
	if m.opts.SkipInvalid {
		m.skipped++
		return false, nil
	}
	return false, m.errAt(dg.stream.fileOffset(pos), "%s", bad.msg)
}

// skipVLSD passes over the VLSD record of g at pos, noting where it is
// for the frame that points to it.
func (m *MF4Reader) skipVLSD(dg *mf4DG, g *mf4Group, hdr int, pos int64) error {
	c := m.cur
	b, err := c.peek(hdr + 4)
	if err != nil {
		return m.partial(dg, pos, err)
	}
	n := uint64(binary.LittleEndian.Uint32(b[hdr:]))
	g.vLast, g.vLastPos, g.vHas = g.vNext, pos, true
	g.vNext += 4 + n
	if !c.skip(int64(hdr) + 4 + int64(n)) {
		return m.partial(dg, pos, io.EOF)
	}
	return nil
}

// partial handles a stream that ends inside a record at pos: the end of
// an unfinalized file's data, or an error.
//
// The data of an unfinalized file ends where the logger stopped. Where
// that is inside a record, the record's bytes are left unread, and the
// file was cut (power lost while writing, a copy made too early): the
// reading goes on with the other data groups and then ends with an
// *OffsetError at the cut record that says how many bytes were left, as
// a cut BLF or candump file ends with an error after its whole frames.
// With Options.SkipInvalid the cut record is counted as skipped instead.
func (m *MF4Reader) partial(dg *mf4DG, pos int64, err error) error {
	if err != io.EOF {
		return m.fail(err)
	}
	if dg.stream.open {
		left := dg.stream.size - pos
		m.cur.seek(dg.stream.size)
		switch {
		case left <= 0:
		case m.opts.SkipInvalid:
			m.skipped++
		case m.tail == nil:
			m.tail = m.errAt(dg.stream.fileOffset(pos), "the unfinalized file ends %d bytes into this record, which was left unread (the file was cut; the frames before it were read)", left)
		}
		return nil
	}
	if dg.stream.cut >= 0 {
		return m.fail(m.errAt(dg.stream.cut, "the file ends inside the record at byte %d", dg.stream.fileOffset(pos)))
	}
	return m.fail(m.errAt(dg.stream.fileOffset(pos), "the data ends inside a record"))
}

// errMF4End is a look-up of signal data that ran into the end of the
// data: the record is where the data was cut.
var errMF4End = errors.New("capture: mf4: end of data")

// mf4BadRecord is a record Next can skip.
type mf4BadRecord struct{ msg string }

func (e *mf4BadRecord) Error() string { return e.msg }

func bad(format string, args ...any) error {
	return &mf4BadRecord{msg: fmt.Sprintf(format, args...)}
}

// frame fills *f from record rec of g; after is the stream position
// past the record.
func (m *MF4Reader) frame(f *frame.Frame, g *mf4Group, rec []byte, idx uint64, after int64) error {
	*f = frame.Frame{Time: m.start + g.time.ns(rec, idx)}
	bus := uint64(1)
	if g.bus.ok {
		var ok bool
		if bus, ok = g.bus.value(rec, idx); !ok || bus == 0 || bus > 256 {
			return bad("bus channel %d, want 1 to 256", bus)
		}
	}
	f.Bus = uint8(bus - 1)
	if m.names[f.Bus] == "" {
		m.names[f.Bus] = "can" + strconv.Itoa(int(f.Bus))
	}
	if g.kind == mf4Error {
		f.Flags = frame.Error
		return nil
	}
	if err := g.canID(f, rec, idx); err != nil {
		return err
	}
	fd := false
	if g.edl.ok {
		v, _ := g.edl.value(rec, idx)
		fd = v != 0
	}
	// The length: DataLength, else from DLC, else what the data holds.
	want := -1
	if g.dataLen.ok {
		v, _ := g.dataLen.value(rec, idx)
		want = int(min(v, 255))
	} else if g.dlc.ok {
		v, _ := g.dlc.value(rec, idx)
		want = dlcLen(v, fd)
	}
	if g.kind == mf4Remote {
		f.Flags |= frame.Remote
		if g.dlc.ok {
			v, _ := g.dlc.value(rec, idx)
			want = int(min(v, 8))
		}
		f.Len = uint8(min(max(want, 0), 8))
		return nil
	}
	if fd {
		g.fdFlags(f, rec, idx)
	}
	n, err := m.frameData(f, g, rec, after)
	if err != nil {
		return err
	}
	if want < 0 {
		want = n
	}
	// A classic frame's DLC above 8 still means 8 bytes.
	if !fd {
		want = min(want, 8)
	}
	if want > n || want > frame.MaxLen {
		return bad("data length %d, only %d data bytes", want, n)
	}
	f.Len = uint8(want)
	clear(f.Data[want:n])
	return nil
}

// canID sets f's ID and its Extended flag from record rec (number idx)
// of g, or returns why they are out of range.
func (g *mf4Group) canID(f *frame.Frame, rec []byte, idx uint64) error {
	id, ok := g.id.value(rec, idx)
	if !ok {
		return bad("ID out of range")
	}
	// Bit 31 marks an extended ID where there is no IDE channel, as in
	// struct can_frame.
	ext := id&(1<<31) != 0
	id &^= 1 << 31
	if g.ide.ok {
		v, _ := g.ide.value(rec, idx)
		ext = ext || v != 0
	}
	switch {
	case ext && id > 0x1FFFFFFF:
		return bad("extended ID %X above 1FFFFFFF", id)
	case !ext && id > 0x7FF:
		return bad("standard ID %X above 7FF", id)
	}
	f.ID = uint32(id)
	if ext {
		f.Flags |= frame.Extended
	}
	return nil
}

// fdFlags sets the FD flags of f: FD, and BRS and ESI where g's record
// rec (number idx) has them set.
func (g *mf4Group) fdFlags(f *frame.Frame, rec []byte, idx uint64) {
	f.Flags |= frame.FD
	if g.brs.ok {
		if v, _ := g.brs.value(rec, idx); v != 0 {
			f.Flags |= frame.BRS
		}
	}
	if g.esi.ok {
		if v, _ := g.esi.value(rec, idx); v != 0 {
			f.Flags |= frame.ESI
		}
	}
}

// frameData copies the data bytes of g's record rec into f, from the
// record itself, a VLSD record (before offset after) or a signal data
// block, and returns how many there are.
func (m *MF4Reader) frameData(f *frame.Frame, g *mf4Group, rec []byte, after int64) (int, error) {
	switch d := &g.data; d.mode {
	case mf4BytesFixed:
		return copy(f.Data[:], rec[d.byteOff:d.byteOff+d.n]), nil
	case mf4BytesVLSD:
		return m.vlsd(d.vlsd, d.off.raw(rec), after, &f.Data)
	case mf4BytesSD:
		return m.signal(d, d.off.raw(rec), &f.Data)
	}
	return 0, nil
}

// dlcLen is the data length a DLC stands for.
func dlcLen(dlc uint64, fd bool) int {
	switch {
	case dlc <= 8:
		return int(dlc)
	case !fd:
		return 8
	case dlc > 15:
		return 64
	}
	return [...]int{12, 16, 20, 24, 32, 48, 64}[dlc-9]
}

// vlsd copies the value at signal data offset x of the VLSD group v into
// dst and returns its length. The value's record is usually the one
// just passed or the first of v after the current record (CANedge
// writes it right after); another cursor finds it, looking ahead, so
// memory does not depend on how far.
func (m *MF4Reader) vlsd(v *mf4Group, x uint64, after int64, dst *[frame.MaxLen]byte) (int, error) {
	dg := m.dgs[m.dg]
	if v.scan == nil {
		v.scan = newMF4Cursor(m, dg.stream)
	}
	s := v.scan
	switch {
	case v.vHas && x == v.vLast:
		s.seek(v.vLastPos)
		v.scanNext = x
	case x >= v.vNext:
		if s.pos() < after || v.scanNext > x {
			s.seek(after)
			v.scanNext = v.vNext
		}
	case v.scanNext > x:
		s.seek(0)
		v.scanNext = 0
	}
	hdr := dg.idSize
	for {
		p := s.pos()
		if p >= dg.stream.size {
			return 0, m.lookEnd(dg.stream, x)
		}
		g := dg.only
		if hdr > 0 {
			b, err := s.peek(hdr)
			if err != nil {
				return 0, m.lookErr(err, x)
			}
			if g = dg.byID[leUint(b)]; g == nil {
				return 0, bad("no signal data at offset %d", x)
			}
		}
		if g.kind != mf4VLSD {
			if !s.skip(int64(hdr + g.size)) {
				return 0, m.lookEnd(dg.stream, x)
			}
			continue
		}
		b, err := s.peek(hdr + 4)
		if err == io.EOF {
			return 0, m.lookEnd(dg.stream, x)
		}
		if err != nil {
			return 0, err
		}
		n := uint64(binary.LittleEndian.Uint32(b[hdr:]))
		at := v.scanNext
		if g == v && at == x {
			if n > frame.MaxLen {
				return 0, bad("signal data of %d bytes, more than %d", n, frame.MaxLen)
			}
			b, err := s.peek(hdr + 4 + int(n))
			if err == io.EOF {
				return 0, m.lookEnd(dg.stream, x)
			}
			if err != nil {
				return 0, err
			}
			copy(dst[:], b[hdr+4:])
		}
		if !s.skip(int64(hdr) + 4 + int64(n)) {
			return 0, m.lookEnd(dg.stream, x)
		}
		if g != v {
			continue
		}
		v.scanNext += 4 + n
		switch {
		case at == x:
			return int(n), nil
		case at > x:
			return 0, bad("signal data offset %d is not the start of a value", x)
		}
	}
}

// signal copies the value at offset x of a signal data stream into dst.
func (m *MF4Reader) signal(d *mf4Bytes, x uint64, dst *[frame.MaxLen]byte) (int, error) {
	if x > uint64(d.sd.size) {
		return 0, bad("signal data offset %d past its %d bytes", x, d.sd.size)
	}
	if d.sdc == nil {
		d.sdc = newMF4Cursor(m, d.sd)
	}
	d.sdc.seek(int64(x))
	b, err := d.sdc.peek(4)
	if err != nil {
		return 0, m.lookErr(err, x)
	}
	n := int(binary.LittleEndian.Uint32(b))
	if n > frame.MaxLen {
		return 0, bad("signal data of %d bytes, more than %d", n, frame.MaxLen)
	}
	if b, err = d.sdc.peek(4 + n); err != nil {
		return 0, m.lookErr(err, x)
	}
	return copy(dst[:], b[4:]), nil
}

// lookEnd is a VLSD look-up that ran into the end of the record
// stream: where a truncated or unfinalized file ends, the end of the
// data; else no value at that offset.
func (m *MF4Reader) lookEnd(s *mf4Stream, x uint64) error {
	if s.cut >= 0 || s.open {
		return errMF4End
	}
	return bad("no signal data at offset %d", x)
}

// lookErr turns a failed look-up of signal data into a bad record, or
// keeps a read error.
func (m *MF4Reader) lookErr(err error, x uint64) error {
	if err == io.EOF {
		return bad("signal data at offset %d runs past the data", x)
	}
	return err
}

// leUint decodes a little-endian unsigned integer of up to 8 bytes.
func leUint(b []byte) uint64 {
	var v uint64
	for i := len(b) - 1; i >= 0; i-- {
		v = v<<8 | uint64(b[i])
	}
	return v
}

// raw returns the field's bits.
func (f *mf4Field) raw(rec []byte) uint64 {
	nb := (int(f.bitOff) + int(f.bits) + 7) >> 3
	b := rec[f.byteOff : f.byteOff+nb]
	var v uint64
	if f.bigEndian {
		for _, c := range b {
			v = v<<8 | uint64(c)
		}
		return v
	}
	v = leUint(b) >> f.bitOff
	if f.bits < 64 {
		v &= 1<<f.bits - 1
	}
	return v
}

// value returns the field's converted value, false when it is not a
// non-negative integer below 2^63.
func (f *mf4Field) value(rec []byte, idx uint64) (uint64, bool) {
	raw := idx
	if !f.virtual {
		raw = f.raw(rec)
	}
	return f.conv.apply(raw)
}

func (cv *mf4Conv) apply(raw uint64) (uint64, bool) {
	var v float64
	switch cv.kind {
	case mf4ConvIdentity:
		return raw, true
	case mf4ConvLinear:
		v = cv.a + cv.b*float64(raw)
	default:
		v = cv.table(float64(raw))
	}
	if !(v >= 0 && v < 1<<63) {
		return 0, false
	}
	return uint64(math.Round(v)), true
}

// table looks x up in a value-to-value table: interpolated between keys
// (type 4) or the value of the nearest key (type 5); beyond the keys,
// the first or last value.
func (cv *mf4Conv) table(x float64) float64 {
	k := cv.keys
	if x <= k[0] {
		return cv.vals[0]
	}
	for i := 1; i < len(k); i++ {
		if x > k[i] {
			continue
		}
		if x == k[i] {
			return cv.vals[i]
		}
		if cv.kind == mf4ConvTableInt {
			return cv.vals[i-1] + (cv.vals[i]-cv.vals[i-1])*(x-k[i-1])/(k[i]-k[i-1])
		}
		if x-k[i-1] < k[i]-x {
			return cv.vals[i-1]
		}
		return cv.vals[i]
	}
	return cv.vals[len(cv.vals)-1]
}

// ns returns the record's time in ns from the start time.
func (t *mf4Time) ns(rec []byte, idx uint64) int64 {
	if t.float {
		var x float64
		if t.f.bits == 32 {
			x = float64(math.Float32frombits(uint32(t.f.raw(rec))))
		} else {
			x = math.Float64frombits(t.f.raw(rec))
		}
		return int64(math.Round(x*t.scale)) + t.offNs
	}
	raw := idx
	if !t.virtual {
		raw = t.f.raw(rec)
	}
	v := int64(raw)
	if t.signed && t.f.bits < 64 && raw>>(t.f.bits-1)&1 != 0 {
		v -= 1 << t.f.bits
	}
	if t.k != 0 {
		return v*t.k + t.offNs
	}
	return int64(math.Round(float64(v)*t.scale)) + t.offNs
}
