package capture

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math"
	"strings"

	"github.com/yukart/candec/internal/base/termtext"
)

// The MDF 4 blocks the reader follows, with the fields it reads
// (little-endian; every block starts with a 24-byte head: id "##XX",
// 4 reserved bytes, u64 length, u64 link count, then the links, then
// the data):
//
//	ID  (64 bytes at 0)  "MDF     " | "UnFinMF ", "4.xx", ..., u16 version at 28,
//	                     u16 unfinalized flags at 60
//	HD  links: first DG | data: u64 start ns, i16 tz min, i16 dst min, u8 time flags
//	DG  links: next DG, first CG, data | data: u8 record id size
//	CG  links: next CG, first CN, name TX | data: u64 record id, u64 cycles,
//	                     u16 flags (bit 0 VLSD), ..., u32 data bytes, u32 invalidation bytes
//	CN  links: next CN, composition, name TX, source, CC, data (VLSD: SD or CG) |
//	    data: u8 type, u8 sync, u8 data type, u8 bit offset, u32 byte offset, u32 bit count
//	CC  data: u8 type, ..., u16 value count at 6, f64 values from 24
//	DL  links: next DL, data blocks | data: u8 flags, 3 reserved, u32 count
//	DZ  data: "DT"|"SD", u8 zip type, 1 reserved, u32 zip parameter,
//	          u64 inflated length, u64 compressed length, the zlib stream

// Limits on what a file may make the reader do.
const (
	mf4MaxBlocks    = 1 << 16  // metadata blocks visited
	mf4MaxLinks     = 1 << 20  // links of one block (a DL lists many)
	mf4MaxFrags     = 1 << 20  // data blocks of all streams
	mf4MaxInflated  = 64 << 20 // inflated bytes of one DZ block
	mf4BufSize      = 64 << 10 // a cursor's window
	mf4MaxRecord    = 4 << 10  // record bytes of a CAN frame group
	mf4MaxNameBytes = 512      // bytes of a channel or group name read
)

// Identification-block flags of an unfinalized file: the length of the
// last DT block was not written.
const mf4UnfinDTLength = 1 << 2

// mf4Block is one block read from the file.
type mf4Block struct {
	off   int64
	id    string // "DG", "CN", ...
	links []int64
	data  []byte
	size  int64 // the block's stated length
}

// block reads the block at off, keeping at most maxData bytes of its data.
func (m *MF4Reader) block(off int64, maxData int) (*mf4Block, error) {
	if m.visits++; m.visits > mf4MaxBlocks {
		return nil, m.errAt(off, "more than %d blocks: a link cycle?", mf4MaxBlocks)
	}
	if off < 64 || off > m.size-24 {
		return nil, m.errAt(off, "link to byte %d, outside the file's %d bytes", off, m.size)
	}
	var h [24]byte
	if _, err := m.ra.ReadAt(h[:], off); err != nil {
		return nil, m.errAt(off, "read block: %v", err)
	}
	if h[0] != '#' || h[1] != '#' {
		return nil, m.errAt(off, "no block here (%q)", h[:4])
	}
	b := &mf4Block{off: off, id: string(h[2:4])}
	length, nlinks := binary.LittleEndian.Uint64(h[8:]), binary.LittleEndian.Uint64(h[16:])
	if nlinks > mf4MaxLinks {
		return nil, m.errAt(off, "%s block with %d links", b.id, nlinks)
	}
	if length < 24+8*nlinks {
		return nil, m.errAt(off, "%s block of %d bytes cannot hold its %d links", b.id, length, nlinks)
	}
	b.size = int64(length)
	if length > uint64(m.size-off) {
		// An unfinalized file may not have written a DT block's length;
		// the caller decides.
		if b.id != "DT" && b.id != "SD" {
			return nil, m.errAt(off, "%s block of %d bytes runs past the end of the file", b.id, length)
		}
		b.size = -1
		return b, nil
	}
	nd := min(int(length-24-8*nlinks), maxData)
	body := make([]byte, 8*int(nlinks)+nd)
	if _, err := m.ra.ReadAt(body, off+24); err != nil {
		return nil, m.errAt(off, "read block: %v", err)
	}
	b.links = make([]int64, nlinks)
	for i := range b.links {
		l := binary.LittleEndian.Uint64(body[8*i:])
		if l > math.MaxInt64 {
			return nil, m.errAt(off, "%s block: link %d to byte %d", b.id, i, l)
		}
		b.links[i] = int64(l)
	}
	b.data = body[8*nlinks:]
	return b, nil
}

// want reads the block at off and checks its id and sizes.
func (m *MF4Reader) want(off int64, id string, nlinks, ndata int) (*mf4Block, error) {
	b, err := m.block(off, max(ndata, mf4MaxNameBytes))
	if err != nil {
		return nil, err
	}
	if b.id != id {
		return nil, m.errAt(off, "%s block where a %s block should be", b.id, id)
	}
	if len(b.links) < nlinks || len(b.data) < ndata {
		return nil, m.errAt(off, "%s block too short: %d links, %d data bytes", id, len(b.links), len(b.data))
	}
	return b, nil
}

// once records a visit of a block that must be linked only once (DG, CG,
// CN and data blocks), so a link cycle is an error rather than a loop.
func (m *MF4Reader) once(off int64) error {
	if m.seen[off] {
		return m.errAt(off, "block linked twice: a link cycle")
	}
	m.seen[off] = true
	return nil
}

// text returns the text of the TX (or MD) block at off, "" for no link.
func (m *MF4Reader) text(off int64) (string, error) {
	if off == 0 {
		return "", nil
	}
	b, err := m.block(off, mf4MaxNameBytes)
	if err != nil {
		return "", err
	}
	if b.id != "TX" && b.id != "MD" {
		return "", m.errAt(off, "%s block where a TX block should be", b.id)
	}
	if i := bytes.IndexByte(b.data, 0); i >= 0 {
		b.data = b.data[:i]
	}
	return string(b.data), nil
}

// open reads the identification and header blocks and every data group.
func (m *MF4Reader) open() error {
	var id [64]byte
	if m.size < 64+24 {
		return m.errAt(0, "file of %d bytes, shorter than an identification and a header block", m.size)
	}
	if _, err := m.ra.ReadAt(id[:], 0); err != nil {
		return m.errAt(0, "read: %v", err)
	}
	if !detectMF4(id[:]) {
		return m.errAt(0, "not an MDF 4 file: identification %q %q", id[:8], id[8:16])
	}
	if v := binary.LittleEndian.Uint16(id[28:]); v < 400 || v >= 500 {
		return m.errAt(28, "MDF version number %d, want 4xx", v)
	}
	m.unfinished = string(id[:8]) == "UnFinMF "
	unfin := binary.LittleEndian.Uint16(id[60:])
	hd, err := m.want(64, "HD", 1, 24)
	if err != nil {
		return err
	}
	// The start time is UTC unless the local-time flag (bit 0) is set,
	// and then the zone is unknown: it is taken as UTC. The time-zone and
	// DST offsets (valid with bit 1) say what the local time was; the
	// instant does not depend on them.
	m.start = int64(binary.LittleEndian.Uint64(hd.data))
	m.seen = make(map[int64]bool)
	for dg := hd.links[0]; dg != 0; {
		if err := m.once(dg); err != nil {
			return err
		}
		b, err := m.want(dg, "DG", 3, 1)
		if err != nil {
			return err
		}
		g, err := m.dataGroup(b)
		if err != nil {
			return err
		}
		if g != nil {
			m.dgs = append(m.dgs, g)
		}
		dg = b.links[0]
	}
	if m.unfinished && m.last.s != nil {
		// The last DT block of an unfinalized file runs to the end of the
		// file when its length was not written (or is impossible).
		s := m.last.s
		f := &s.frags[m.last.i]
		if m.last.i == len(s.frags)-1 && (unfin&mf4UnfinDTLength != 0 || m.last.size < 0) {
			s.size += m.size - f.file - f.n
			f.n = m.size - f.file
			s.open, s.cut = true, -1
		}
	}
	return nil
}

// Frame kinds of a channel group.
const (
	mf4Other uint8 = iota // not CAN frames: records skipped
	mf4Data
	mf4Remote
	mf4Error
	mf4VLSD // variable-length signal data of another group
)

// dataGroup reads a data group's channel groups and data blocks. It
// returns nil for a group without data.
func (m *MF4Reader) dataGroup(b *mf4Block) (*mf4DG, error) {
	g := &mf4DG{off: b.off, idSize: int(b.data[0]), byID: make(map[uint64]*mf4Group)}
	switch g.idSize {
	case 0, 1, 2, 4, 8:
	default:
		return nil, m.errAt(b.off, "record id size %d, want 0, 1, 2, 4 or 8", g.idSize)
	}
	var vlsdLinks []*mf4Bytes
	for cg := b.links[1]; cg != 0; {
		if err := m.once(cg); err != nil {
			return nil, err
		}
		cb, err := m.want(cg, "CG", 3, 32)
		if err != nil {
			return nil, err
		}
		grp, err := m.channelGroup(cb, g)
		if err != nil {
			return nil, err
		}
		if g.idSize == 0 && g.only != nil {
			return nil, m.errAt(cg, "second channel group in a data group without record ids")
		}
		if _, dup := g.byID[grp.recID]; dup && g.idSize > 0 {
			return nil, m.errAt(cg, "record id %d used twice", grp.recID)
		}
		if g.idSize > 0 && g.idSize < 8 && grp.recID>>(8*g.idSize) != 0 {
			return nil, m.errAt(cg, "record id %d does not fit in %d bytes", grp.recID, g.idSize)
		}
		g.byID[grp.recID] = grp
		g.only = grp
		if grp.data.mode == mf4BytesVLSD {
			vlsdLinks = append(vlsdLinks, &grp.data)
		}
		cg = cb.links[0]
	}
	if g.only == nil || b.links[2] == 0 {
		return nil, nil
	}
	if g.idSize == 0 && g.only.size == 0 {
		// Records of no bytes would never end.
		return nil, m.errAt(b.off, "records of 0 bytes without record ids")
	}
	// A VLSD channel names the channel group of its data by the group's
	// block offset.
	for _, d := range vlsdLinks {
		var v *mf4Group
		for _, grp := range g.byID {
			if grp.off == d.link && grp.kind == mf4VLSD {
				v = grp
			}
		}
		if v == nil {
			return nil, m.errAt(d.cn, "DataBytes links to byte %d, not a VLSD channel group of its data group", d.link)
		}
		d.vlsd = v
	}
	g.stream = &mf4Stream{cut: -1}
	if err := m.data(g.stream, b.links[2], true); err != nil {
		return nil, err
	}
	return g, nil
}

// data appends the data blocks at off (DT, SD, DZ, DL, HL) to s.
func (m *MF4Reader) data(s *mf4Stream, off int64, top bool) error {
	for off != 0 {
		b, err := m.block(off, 24)
		if err != nil {
			return err
		}
		// Every data block is linked once, so the data to read is at
		// most the file (and what its DZ blocks inflate to).
		if err := m.once(off); err != nil {
			return err
		}
		switch b.id {
		case "DT", "SD":
			n := b.size - 24
			if b.size < 0 {
				// Past the end of the file: a truncated file, or the
				// unwritten length of an unfinalized one.
				n = m.size - off - 24
				s.cut = m.size
			}
			if err := m.frag(s, mf4Frag{file: off + 24, n: n}); err != nil {
				return err
			}
			if b.id == "DT" && (m.last.s == nil || off > m.last.off) {
				m.last.s, m.last.i, m.last.off, m.last.size = s, len(s.frags)-1, off, b.size
			}
			return nil
		case "DZ":
			f, err := m.dzFrag(b, off)
			if err != nil {
				return err
			}
			return m.frag(s, f)
		case "DL":
			if len(b.links) < 1 || len(b.data) < 8 {
				return m.errAt(off, "DL block too short")
			}
			n := binary.LittleEndian.Uint32(b.data[4:])
			if uint64(n) > uint64(len(b.links)-1) {
				return m.errAt(off, "DL block lists %d blocks, has %d links", n, len(b.links)-1)
			}
			for _, l := range b.links[1 : 1+n] {
				if l == 0 {
					continue
				}
				if err := m.leaf(s, l); err != nil {
					return err
				}
			}
			off = b.links[0]
		case "HL":
			if !top {
				return m.errAt(off, "HL block inside a data list")
			}
			if len(b.links) < 1 {
				return m.errAt(off, "HL block without links")
			}
			off, top = b.links[0], false
		default:
			return m.errAt(off, "%s block where data should be (DT, SD, DZ, DL, HL)", b.id)
		}
	}
	return nil
}

// dzFrag returns the fragment of the DZ block b at off, its header
// checked: what it holds, how, and sizes that a deflate stream can keep.
func (m *MF4Reader) dzFrag(b *mf4Block, off int64) (mf4Frag, error) {
	if len(b.data) < 24 {
		return mf4Frag{}, m.errAt(off, "DZ block too short")
	}
	f := mf4Frag{file: off, dz: true, zip: b.data[2], cols: binary.LittleEndian.Uint32(b.data[4:])}
	n, clen := binary.LittleEndian.Uint64(b.data[8:]), binary.LittleEndian.Uint64(b.data[16:])
	switch {
	case string(b.data[:2]) != "DT" && string(b.data[:2]) != "SD":
		return f, m.errAt(off, "DZ block of %q data, want DT or SD", b.data[:2])
	case f.zip > 1:
		return f, m.errAt(off, "DZ zip type %d, want 0 (deflate) or 1 (transposition + deflate)", f.zip)
	case f.zip == 1 && f.cols == 0:
		return f, m.errAt(off, "DZ transposition with 0 columns")
	case n > mf4MaxInflated:
		return f, m.errAt(off, "DZ block inflates to %d bytes, more than the %d accepted", n, mf4MaxInflated)
	case clen > uint64(b.size-48):
		return f, m.errAt(off, "DZ block of %d bytes cannot hold %d compressed bytes", b.size, clen)
	case n > 1032*clen+64:
		// Deflate expands at most 1032 times: a claim beyond is not
		// worth an allocation.
		return f, m.errAt(off, "DZ block of %d compressed bytes says it inflates to %d", clen, n)
	}
	f.n, f.clen = int64(n), int64(clen)
	return f, nil
}

// leaf appends one block a DL block lists: DT, SD or DZ only.
func (m *MF4Reader) leaf(s *mf4Stream, off int64) error {
	b, err := m.block(off, 0)
	if err != nil {
		return err
	}
	switch b.id {
	case "DT", "SD", "DZ":
		m.visits-- // data reads it again
		return m.data(s, off, false)
	}
	return m.errAt(off, "%s block in a data list, want DT, SD or DZ", b.id)
}

func (m *MF4Reader) frag(s *mf4Stream, f mf4Frag) error {
	if m.frags++; m.frags > mf4MaxFrags {
		return m.errAt(f.file, "more than %d data blocks", mf4MaxFrags)
	}
	f.pos = s.size
	s.frags = append(s.frags, f)
	s.size += f.n
	return nil
}

// mf4Names are the bus-logging channel names (ASAM MDF bus logging):
// a frame kind's structure channel "CAN_DataFrame" and its members
// "CAN_DataFrame.ID", ... or members named alone.
var mf4Kinds = map[string]uint8{
	"CAN_DataFrame":   mf4Data,
	"CAN_RemoteFrame": mf4Remote,
	"CAN_ErrorFrame":  mf4Error,
}

// channelGroup reads a channel group and, for a CAN frame group, where
// each member of a frame is in its records.
func (m *MF4Reader) channelGroup(b *mf4Block, dg *mf4DG) (*mf4Group, error) {
	g := &mf4Group{off: b.off, recID: binary.LittleEndian.Uint64(b.data)}
	flags := binary.LittleEndian.Uint16(b.data[16:])
	dataBytes, invBytes := binary.LittleEndian.Uint32(b.data[24:]), binary.LittleEndian.Uint32(b.data[28:])
	if flags&1 != 0 {
		g.kind = mf4VLSD
		return g, nil
	}
	if uint64(dataBytes)+uint64(invBytes) > math.MaxInt32 {
		return nil, m.errAt(b.off, "records of %d bytes", uint64(dataBytes)+uint64(invBytes))
	}
	g.size = int(dataBytes + invBytes)
	var chans []mf4Chan
	if err := m.channels(b.links[1], "", &chans, 0); err != nil {
		return nil, err
	}
	for _, c := range chans {
		if c.ctype == 2 || c.ctype == 3 {
			if g.time.ok {
				return nil, m.errAt(c.off, "second master channel")
			}
			if err := m.timeChannel(&g.time, c, int(dataBytes)); err != nil {
				return nil, err
			}
			continue
		}
		kind, member, ok := strings.Cut(c.name, ".")
		if !ok {
			continue
		}
		k, known := mf4Kinds[kind[strings.LastIndexByte(kind, '/')+1:]]
		if !known {
			continue
		}
		if g.kind != mf4Other && g.kind != k {
			return nil, m.errAt(c.off, "channel %s in a group of another frame kind", termtext.Quote(c.name))
		}
		g.kind = k
		if member == "DataBytes" {
			if err := m.dataBytes(&g.data, c, int(dataBytes)); err != nil {
				return nil, err
			}
			continue
		}
		if f := g.member(member); f != nil {
			if err := m.field(f, c, int(dataBytes)); err != nil {
				return nil, err
			}
		}
	}
	if g.kind == mf4Other {
		return g, nil
	}
	if err := m.checkFrameGroup(b, g); err != nil {
		return nil, err
	}
	return g, nil
}

// member returns the field of g that the ASAM CAN frame member name
// (BusChannel, ID, …) fills; nil for a member the reader does not use.
func (g *mf4Group) member(name string) *mf4Field {
	switch name {
	case "BusChannel":
		return &g.bus
	case "ID":
		return &g.id
	case "IDE":
		return &g.ide
	case "DLC":
		return &g.dlc
	case "DataLength":
		return &g.dataLen
	case "EDL":
		return &g.edl
	case "BRS":
		return &g.brs
	case "ESI":
		return &g.esi
	}
	return nil
}

// checkFrameGroup checks that the CAN frame group g, of block b, has
// the channels its frames need and records the reader takes.
func (m *MF4Reader) checkFrameGroup(b *mf4Block, g *mf4Group) error {
	switch {
	case g.size > mf4MaxRecord:
		return m.errAt(b.off, "CAN frame records of %d bytes, more than the %d accepted", g.size, mf4MaxRecord)
	case !g.time.ok:
		return m.errAt(b.off, "CAN frame group without a time master channel")
	case g.kind != mf4Error && !g.id.ok:
		return m.errAt(b.off, "CAN frame group without an ID channel")
	case g.kind == mf4Data && g.data.mode == mf4BytesNone:
		return m.errAt(b.off, "CAN data frame group without a DataBytes channel")
	}
	return nil
}

// mf4Chan is a channel block's fields the reader uses.
type mf4Chan struct {
	off                int64
	name               string
	ctype, sync, dtype uint8
	bitOff             uint8
	byteOff, bits      uint32
	cc, data           int64
}

// channels appends the channels of the CN list at off, with the members
// of composed channels (structures) after their parent.
func (m *MF4Reader) channels(off int64, parent string, out *[]mf4Chan, depth int) error {
	if depth > 4 {
		return m.errAt(off, "channel structures nested deeper than 4")
	}
	for off != 0 {
		if err := m.once(off); err != nil {
			return err
		}
		b, err := m.want(off, "CN", 6, 16)
		if err != nil {
			return err
		}
		name, err := m.text(b.links[2])
		if err != nil {
			return err
		}
		if parent != "" && !strings.Contains(name, ".") {
			name = parent + "." + name
		}
		d := b.data
		c := mf4Chan{off: off, name: name, ctype: d[0], sync: d[1], dtype: d[2], bitOff: d[3],
			byteOff: binary.LittleEndian.Uint32(d[4:]), bits: binary.LittleEndian.Uint32(d[8:]),
			cc: b.links[4], data: b.links[5]}
		*out = append(*out, c)
		if comp := b.links[1]; comp != 0 {
			cb, err := m.block(comp, 0)
			if err != nil {
				return err
			}
			// A composition is a CN list (structure) or a CA block
			// (array), which bus logging does not use.
			if cb.id == "CN" {
				m.visits--
				if err := m.channels(comp, name, out, depth+1); err != nil {
					return err
				}
			}
		}
		off = b.links[0]
	}
	return nil
}

// place checks that a channel's bits lie within the record's data bytes.
func (m *MF4Reader) place(c mf4Chan, dataBytes int) error {
	if c.bitOff > 7 {
		return m.errAt(c.off, "channel %s: bit offset %d, want 0 to 7", termtext.Quote(c.name), c.bitOff)
	}
	if uint64(c.byteOff)*8+uint64(c.bitOff)+uint64(c.bits) > uint64(dataBytes)*8 {
		return m.errAt(c.off, "channel %s: bits %d to %d lie outside the record's %d bytes",
			termtext.Quote(c.name), uint64(c.byteOff)*8+uint64(c.bitOff), uint64(c.byteOff)*8+uint64(c.bitOff)+uint64(c.bits), dataBytes)
	}
	return nil
}

// field reads where an integer member of a frame is, and its conversion.
func (m *MF4Reader) field(f *mf4Field, c mf4Chan, dataBytes int) error {
	cv, err := m.conversion(c)
	if err != nil {
		return err
	}
	*f = mf4Field{ok: true, conv: cv}
	switch c.ctype {
	case 6: // virtual: the raw value is the record's index
		f.virtual = true
		return nil
	case 0:
	default:
		return m.errAt(c.off, "channel %s of channel type %d, want 0 (fixed) or 6 (virtual)", termtext.Quote(c.name), c.ctype)
	}
	switch {
	case c.bits == 0 || c.bits > 64 || uint32(c.bitOff)+c.bits > 64:
		return m.errAt(c.off, "channel %s: %d bits at bit %d, want 1 to 64 within 8 bytes", termtext.Quote(c.name), c.bits, c.bitOff)
	case c.dtype == 1 && (c.bitOff != 0 || c.bits%8 != 0):
		return m.errAt(c.off, "channel %s: big-endian and not byte-aligned", termtext.Quote(c.name))
	case c.dtype > 1:
		return m.errAt(c.off, "channel %s of data type %d, want an unsigned integer (0, 1)", termtext.Quote(c.name), c.dtype)
	}
	f.byteOff, f.bitOff, f.bits, f.bigEndian = int(c.byteOff), c.bitOff, uint8(c.bits), c.dtype == 1
	return m.place(c, dataBytes)
}

// timeChannel reads the master channel: where its value is and its
// conversion to seconds.
func (m *MF4Reader) timeChannel(t *mf4Time, c mf4Chan, dataBytes int) error {
	if c.sync != 1 {
		return m.errAt(c.off, "master channel %s of sync type %d, want 1 (time)", termtext.Quote(c.name), c.sync)
	}
	cv, err := m.conversion(c)
	if err != nil {
		return err
	}
	if cv.kind != mf4ConvLinear && cv.kind != mf4ConvIdentity {
		return m.errAt(c.cc, "master channel %s: conversion of type %d, want linear", termtext.Quote(c.name), cv.kind)
	}
	a, b := cv.a, cv.b
	if cv.kind == mf4ConvIdentity {
		a, b = 0, 1
	}
	*t = mf4Time{ok: true, offNs: int64(math.Round(a * 1e9)), scale: b * 1e9}
	// A whole number of ns a step (1 for ns, 1000 for µs) is exact in
	// integers.
	if k := math.Round(t.scale); k >= 1 && k < 1<<40 && math.Abs(t.scale-k) <= 1e-9*k {
		t.k = int64(k)
	}
	if c.ctype == 3 {
		t.virtual = true
		return nil
	}
	t.f = mf4Field{ok: true, byteOff: int(c.byteOff), bitOff: c.bitOff, bits: uint8(min(c.bits, 255))}
	switch c.dtype {
	case 0, 1, 2, 3:
		if c.bits == 0 || c.bits > 64 || uint32(c.bitOff)+c.bits > 64 || (c.dtype&1 == 1 && (c.bitOff != 0 || c.bits%8 != 0)) {
			return m.errAt(c.off, "master channel %s: %d bits at bit %d", termtext.Quote(c.name), c.bits, c.bitOff)
		}
		t.f.bigEndian, t.signed = c.dtype&1 == 1, c.dtype >= 2
	case 4, 5:
		if (c.bits != 32 && c.bits != 64) || c.bitOff != 0 {
			return m.errAt(c.off, "master channel %s: float of %d bits at bit %d", termtext.Quote(c.name), c.bits, c.bitOff)
		}
		t.float, t.f.bigEndian = true, c.dtype == 5
	default:
		return m.errAt(c.off, "master channel %s of data type %d, want a number", termtext.Quote(c.name), c.dtype)
	}
	return m.place(c, dataBytes)
}

// dataBytes reads where a frame's data bytes are: in the record, or in
// signal data (an SD stream or a VLSD channel group) at the offset the
// record holds.
func (m *MF4Reader) dataBytes(d *mf4Bytes, c mf4Chan, dataBytes int) error {
	switch c.ctype {
	case 0:
		if c.dtype != 10 || c.bitOff != 0 || c.bits%8 != 0 || c.bits > 8*64 {
			return m.errAt(c.off, "DataBytes: %d bits of data type %d, want up to 64 bytes (type 10)", c.bits, c.dtype)
		}
		*d = mf4Bytes{mode: mf4BytesFixed, byteOff: int(c.byteOff), n: int(c.bits / 8), cn: c.off}
		return m.place(c, dataBytes)
	case 1:
		if c.bits == 0 || c.bits > 64 || c.bits%8 != 0 || c.bitOff != 0 || c.dtype > 10 {
			return m.errAt(c.off, "DataBytes: VLSD offset of %d bits at bit %d, want whole bytes up to 8", c.bits, c.bitOff)
		}
		if err := m.place(c, dataBytes); err != nil {
			return err
		}
		*d = mf4Bytes{mode: mf4BytesVLSD, link: c.data, cn: c.off,
			off: mf4Field{ok: true, byteOff: int(c.byteOff), bits: uint8(c.bits)}}
		if c.data == 0 {
			return m.errAt(c.off, "DataBytes: VLSD channel without signal data")
		}
		b, err := m.block(c.data, 0)
		if err != nil {
			return err
		}
		m.visits--
		if b.id == "CG" {
			return nil // resolved by the data group
		}
		d.mode = mf4BytesSD
		d.sd = &mf4Stream{cut: -1}
		return m.data(d.sd, c.data, true)
	}
	return m.errAt(c.off, "DataBytes of channel type %d, want 0 (fixed) or 1 (VLSD)", c.ctype)
}

// Conversion kinds the reader applies (the CC block's type).
const (
	mf4ConvIdentity = 0
	mf4ConvLinear   = 1
	mf4ConvTableInt = 4 // value to value, interpolated
	mf4ConvTable    = 5 // value to value, nearest key
)

// conversion reads a channel's conversion.
func (m *MF4Reader) conversion(c mf4Chan) (mf4Conv, error) {
	if c.cc == 0 {
		return mf4Conv{kind: mf4ConvIdentity}, nil
	}
	b, err := m.want(c.cc, "CC", 0, 24)
	if err != nil {
		return mf4Conv{}, err
	}
	kind, n := b.data[0], int(binary.LittleEndian.Uint16(b.data[6:]))
	b2, err := m.block(c.cc, 24+8*n)
	if err != nil {
		return mf4Conv{}, err
	}
	m.visits--
	if len(b2.data) < 24+8*n {
		return mf4Conv{}, m.errAt(c.cc, "CC block too short for its %d values", n)
	}
	val := func(i int) float64 { return math.Float64frombits(binary.LittleEndian.Uint64(b2.data[24+8*i:])) }
	cv := mf4Conv{kind: kind}
	switch kind {
	case mf4ConvIdentity:
	case mf4ConvLinear:
		if n < 2 {
			return cv, m.errAt(c.cc, "linear conversion with %d values", n)
		}
		cv.a, cv.b = val(0), val(1)
		if cv.a == 0 && cv.b == 1 {
			cv.kind = mf4ConvIdentity
		}
	case mf4ConvTableInt, mf4ConvTable:
		if n < 2 || n%2 != 0 || n > 2*256 {
			return cv, m.errAt(c.cc, "value table with %d values", n)
		}
		for i := 0; i < n; i += 2 {
			k := val(i)
			if i > 0 && !(k > cv.keys[len(cv.keys)-1]) {
				return cv, m.errAt(c.cc, "value table keys not increasing")
			}
			cv.keys, cv.vals = append(cv.keys, k), append(cv.vals, val(i+1))
		}
	default:
		return cv, m.errAt(c.cc, "channel %s: conversion of type %d, want identity, linear or a value table", termtext.Quote(c.name), kind)
	}
	return cv, nil
}

func (m *MF4Reader) errAt(off int64, format string, args ...any) error {
	return &OffsetError{Format: "mf4", Offset: off, Msg: fmt.Sprintf(format, args...)}
}
