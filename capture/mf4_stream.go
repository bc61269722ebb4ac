package capture

import (
	"compress/zlib"
	"io"
	"sort"
)

// An MDF data stream (the records of a data group, or the signal data of
// a VLSD channel) is the concatenation of data blocks: one DT or SD
// block, or the DT/SD/DZ blocks a DL chain (under an HL block) lists.
// A record or a signal value may run across two blocks. The stream is
// read through a cursor that keeps a window of it; DZ blocks are inflated
// whole (capped by mf4MaxInflated) into a small cache the cursors of one
// reader share.

// mf4Frag is one data block of a stream.
type mf4Frag struct {
	pos  int64 // position of its first byte in the stream
	n    int64 // its bytes in the stream (inflated, for a DZ block)
	file int64 // file offset of its data (DT, SD), or of the DZ block
	dz   bool
	zip  uint8  // DZ: 0 deflate, 1 transposition + deflate
	cols uint32 // DZ transposition: the number of columns
	clen int64  // DZ: compressed bytes, after the block's 48-byte head
}

// mf4Stream is the ordered data blocks of one stream.
type mf4Stream struct {
	frags []mf4Frag
	size  int64
	// cut is the file offset where a block's data ends because the
	// file ends there (a truncated file), or -1.
	cut int64
	// open is true when the last block of an unfinalized file runs to
	// the end of the file: the data ends where the logger stopped, and a
	// partial record there is a cut file (see MF4Reader.partial).
	open bool
}

// fileOffset returns the file offset of stream position pos: within a
// DT or SD block the byte's own, within a DZ block the block's.
func (s *mf4Stream) fileOffset(pos int64) int64 {
	i := s.frag(pos)
	if i < 0 {
		if len(s.frags) == 0 {
			return 0
		}
		l := &s.frags[len(s.frags)-1]
		if l.dz {
			return l.file
		}
		return l.file + l.n
	}
	f := &s.frags[i]
	if f.dz {
		return f.file
	}
	return f.file + pos - f.pos
}

// frag returns the index of the block holding stream position pos, or -1.
func (s *mf4Stream) frag(pos int64) int {
	i := sort.Search(len(s.frags), func(i int) bool { return s.frags[i].pos+s.frags[i].n > pos })
	if i == len(s.frags) || pos < s.frags[i].pos {
		return -1
	}
	return i
}

// mf4Inflated is one inflated DZ block; its buffers are reused for the
// next block it caches.
type mf4Inflated struct {
	file     int64
	data     []byte // the block's stream bytes: inf, or out when transposed
	inf, out []byte
}

// inflate returns the inflated data of the DZ block f, from the reader's
// cache of the two blocks inflated last (the record cursor and a VLSD
// cursor may be in different blocks).
func (m *MF4Reader) inflate(f *mf4Frag) ([]byte, error) {
	for i := range m.dz {
		if m.dz[i].data != nil && m.dz[i].file == f.file {
			return m.dz[i].data, nil
		}
	}
	e := &m.dz[m.dzNext]
	m.dzNext ^= 1
	e.data = nil
	zr, err := zlib.NewReader(io.NewSectionReader(m.ra, f.file+48, f.clen))
	if err != nil {
		return nil, m.errAt(f.file, "DZ block: zlib: %v", err)
	}
	e.inf = grow(e.inf, int(f.n))
	if _, err := io.ReadFull(zr, e.inf); err != nil {
		return nil, m.errAt(f.file, "DZ block: inflates to fewer bytes than its header's %d: %v", f.n, err)
	}
	// One byte more would be a block longer than it says.
	var one [1]byte
	if n, _ := zr.Read(one[:]); n > 0 {
		return nil, m.errAt(f.file, "DZ block: inflates to more bytes than its header's %d", f.n)
	}
	e.data = e.inf
	if f.zip == 1 {
		e.out = grow(e.out, len(e.inf))
		untranspose(e.out, e.inf, int(f.cols))
		e.data = e.out
	}
	e.file = f.file
	return e.data, nil
}

// grow returns b with length n, reallocated only when too small.
func grow(b []byte, n int) []byte {
	if cap(b) < n {
		return make([]byte, n)
	}
	return b[:n]
}

// untranspose undoes a DZ block's transposition into out: the first
// rows*cols bytes of in were written column by column (the first bytes
// of all records, then all second bytes, ...), the rest as they were.
func untranspose(out, in []byte, cols int) {
	rows := len(in) / cols
	if rows == 0 {
		// More columns than bytes: nothing was transposed.
		cols = 0
	}
	for c := range cols {
		for r, b := range in[c*rows : (c+1)*rows] {
			out[r*cols+c] = b
		}
	}
	copy(out[rows*cols:], in[rows*cols:])
}

// mf4Cursor reads a stream through a window buf[r:w] whose first byte is
// at stream position bufPos.
type mf4Cursor struct {
	m      *MF4Reader
	s      *mf4Stream
	buf    []byte
	bufPos int64
	r, w   int
}

func newMF4Cursor(m *MF4Reader, s *mf4Stream) *mf4Cursor {
	return &mf4Cursor{m: m, s: s, buf: make([]byte, mf4BufSize)}
}

// pos returns the stream position of the next unread byte.
func (c *mf4Cursor) pos() int64 { return c.bufPos + int64(c.r) }

// seek moves to stream position pos, keeping the window when it holds pos.
func (c *mf4Cursor) seek(pos int64) {
	if pos >= c.bufPos && pos <= c.bufPos+int64(c.w) {
		c.r = int(pos - c.bufPos)
		return
	}
	c.bufPos, c.r, c.w = pos, 0, 0
}

// skip moves n bytes on; it reports false when the stream ends first.
func (c *mf4Cursor) skip(n int64) bool {
	p := c.pos() + n
	if p > c.s.size || n < 0 {
		c.seek(c.s.size)
		return false
	}
	c.seek(p)
	return true
}

// peek returns the next n bytes (n <= mf4BufSize) without reading past
// them; fewer than n when the stream ends first (then io.EOF), or an
// error reading the file.
func (c *mf4Cursor) peek(n int) ([]byte, error) {
	if c.w-c.r >= n {
		return c.buf[c.r : c.r+n], nil
	}
	if err := c.fill(); err != nil {
		return nil, err
	}
	if c.w-c.r < n {
		return c.buf[c.r:c.w], io.EOF
	}
	return c.buf[c.r : c.r+n], nil
}

// fill moves the unread bytes to the front and reads the stream after
// them into the rest of the window.
func (c *mf4Cursor) fill() error {
	n := copy(c.buf, c.buf[c.r:c.w])
	c.bufPos += int64(c.r)
	c.r, c.w = 0, n
	p := c.bufPos + int64(c.w)
	for c.w < len(c.buf) && p < c.s.size {
		i := c.s.frag(p)
		if i < 0 {
			break
		}
		f := &c.s.frags[i]
		k := min(int64(len(c.buf)-c.w), f.pos+f.n-p)
		dst := c.buf[c.w : c.w+int(k)]
		if f.dz {
			data, err := c.m.inflate(f)
			if err != nil {
				return err
			}
			copy(dst, data[p-f.pos:])
		} else if _, err := c.m.ra.ReadAt(dst, f.file+p-f.pos); err != nil {
			return c.m.errAt(f.file+p-f.pos, "read: %v", err)
		}
		c.w += int(k)
		p += k
	}
	return nil
}
