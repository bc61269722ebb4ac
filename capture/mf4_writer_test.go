package capture

import (
	"bytes"
	"compress/zlib"
	"encoding/binary"
	"math"
	"math/rand/v2"

	"github.com/yukart/candec/frame"
)

// mdfFile writes a small MDF 4 file block by block, for tests: the
// layouts CANedge loggers write, and broken ones.
type mdfFile struct{ b []byte }

const mdfStart = 1_700_000_000_123_456_000 // the header's start time, ns

// newMDF writes the identification block and a header block (at 64).
func newMDF(unfinished bool, unfinFlags uint16, timeFlags uint8, tz int16) *mdfFile {
	w := &mdfFile{b: make([]byte, 64)}
	copy(w.b, "MDF     4.11    candec  ")
	if unfinished {
		copy(w.b, "UnFinMF ")
	}
	binary.LittleEndian.PutUint16(w.b[28:], 411)
	binary.LittleEndian.PutUint16(w.b[60:], unfinFlags)
	hd := make([]byte, 32)
	binary.LittleEndian.PutUint64(hd, mdfStart)
	binary.LittleEndian.PutUint16(hd[8:], uint16(tz))
	hd[12] = timeFlags
	w.add("HD", make([]int64, 6), hd)
	return w
}

// add appends a block at the next multiple of 8 and returns its offset.
func (w *mdfFile) add(id string, links []int64, data []byte) int64 {
	for len(w.b)%8 != 0 {
		w.b = append(w.b, 0)
	}
	off := int64(len(w.b))
	w.b = append(w.b, "##"+id+"\x00\x00\x00\x00"...)
	w.b = binary.LittleEndian.AppendUint64(w.b, uint64(24+8*len(links)+len(data)))
	w.b = binary.LittleEndian.AppendUint64(w.b, uint64(len(links)))
	for _, l := range links {
		w.b = binary.LittleEndian.AppendUint64(w.b, uint64(l))
	}
	w.b = append(w.b, data...)
	return off
}

// link sets link i of the block at off.
func (w *mdfFile) link(off int64, i int, to int64) {
	binary.LittleEndian.PutUint64(w.b[off+24+8*int64(i):], uint64(to))
}

func (w *mdfFile) tx(s string) int64 { return w.add("TX", nil, append([]byte(s), 0)) }

// cc writes a conversion of the given type and values.
func (w *mdfFile) cc(kind uint8, vals ...float64) int64 {
	d := make([]byte, 24)
	d[0] = kind
	binary.LittleEndian.PutUint16(d[6:], uint16(len(vals)))
	for _, v := range vals {
		d = binary.LittleEndian.AppendUint64(d, math.Float64bits(v))
	}
	return w.add("CC", make([]int64, 4), d)
}

// mdfCN is a channel to write.
type mdfCN struct {
	name               string
	ctype, sync, dtype uint8
	bitOff             uint8
	byteOff, bits      uint32
	cc, data           int64
	members            []mdfCN
}

// cns writes a list of channels (members as compositions) and returns
// the first one's offset.
func (w *mdfFile) cns(list []mdfCN) int64 {
	var first, prev int64
	for _, c := range list {
		var comp int64
		if len(c.members) > 0 {
			comp = w.cns(c.members)
		}
		d := make([]byte, 72)
		d[0], d[1], d[2], d[3] = c.ctype, c.sync, c.dtype, c.bitOff
		binary.LittleEndian.PutUint32(d[4:], c.byteOff)
		binary.LittleEndian.PutUint32(d[8:], c.bits)
		off := w.add("CN", []int64{0, comp, w.tx(c.name), 0, c.cc, c.data, 0, 0}, d)
		if prev != 0 {
			w.link(prev, 0, off)
		} else {
			first = off
		}
		prev = off
	}
	return first
}

// cg writes a channel group.
func (w *mdfFile) cg(recID uint64, flags uint16, dataBytes uint32, name string, chans []mdfCN) int64 {
	d := make([]byte, 32)
	binary.LittleEndian.PutUint64(d, recID)
	binary.LittleEndian.PutUint16(d[16:], flags)
	binary.LittleEndian.PutUint32(d[24:], dataBytes)
	var first, nm int64
	if chans != nil {
		first = w.cns(chans)
	}
	if name != "" {
		nm = w.tx(name)
	}
	return w.add("CG", []int64{0, first, nm, 0, 0, 0}, d)
}

// dg writes a data group of the channel groups, and chains it after the
// data groups written before.
func (w *mdfFile) dg(idSize uint8, cgs ...int64) int64 {
	for i := 1; i < len(cgs); i++ {
		w.link(cgs[i-1], 0, cgs[i])
	}
	off := w.add("DG", []int64{0, cgs[0], 0, 0}, []byte{idSize, 0, 0, 0, 0, 0, 0, 0})
	l := int64(64 + 24) // the header's first-DG link
	for next := int64(binary.LittleEndian.Uint64(w.b[l:])); next != 0; next = int64(binary.LittleEndian.Uint64(w.b[l:])) {
		l = next + 24
	}
	binary.LittleEndian.PutUint64(w.b[l:], uint64(off))
	return off
}

// Data containers.
const (
	mdfDT     = iota // one DT block
	mdfDTOpen        // a DT block whose length says 24, running to the end of the file (write it last)
	mdfDZ            // one DZ block, deflate
	mdfDZT           // one DZ block, transposition + deflate
	mdfDL            // a DL chain of three DT blocks, records split across them
	mdfHL            // HL, DL of two DZ blocks
)

// data writes stream in a container of the kind, its blocks of type id
// ("DT" or "SD"), and returns the link to it.
func (w *mdfFile) data(kind int, id string, stream []byte, cols int) int64 {
	switch kind {
	case mdfDT:
		return w.add(id, nil, stream)
	case mdfDTOpen:
		off := w.add(id, nil, nil)
		w.b = append(w.b, stream...)
		return off
	case mdfDZ, mdfDZT:
		return w.dz(id, stream, kind == mdfDZT, cols)
	case mdfDL:
		a, b := len(stream)/3+1, 2*len(stream)/3+3
		a, b = min(a, len(stream)), min(b, len(stream))
		parts := []int64{w.add(id, nil, stream[:a]), w.add(id, nil, stream[a:b]), w.add(id, nil, stream[b:])}
		// Two DL blocks chained, the second with equal-length flag off.
		d2 := []byte{0, 0, 0, 0, 2, 0, 0, 0}
		d2 = binary.LittleEndian.AppendUint64(d2, uint64(a))
		d2 = binary.LittleEndian.AppendUint64(d2, uint64(b))
		dl2 := w.add("DL", []int64{0, parts[1], parts[2]}, d2)
		d1 := []byte{0, 0, 0, 0, 1, 0, 0, 0}
		d1 = binary.LittleEndian.AppendUint64(d1, 0)
		return w.add("DL", []int64{dl2, parts[0]}, d1)
	case mdfHL:
		a := len(stream) / 2
		p1, p2 := w.dz(id, stream[:a], false, 0), w.dz(id, stream[a:], true, max(cols, 1))
		d := []byte{0, 0, 0, 0, 2, 0, 0, 0}
		d = binary.LittleEndian.AppendUint64(d, 0)
		d = binary.LittleEndian.AppendUint64(d, uint64(a))
		dl := w.add("DL", []int64{0, p1, p2}, d)
		return w.add("HL", []int64{dl}, []byte{0, 0, 1, 0, 0, 0, 0, 0})
	}
	panic("unknown container")
}

// dz writes a DZ block of stream, transposed in cols columns if asked.
func (w *mdfFile) dz(id string, stream []byte, transpose bool, cols int) int64 {
	in := stream
	if transpose {
		rows := len(stream) / cols
		in = make([]byte, len(stream))
		for r := range rows {
			for c := range cols {
				in[c*rows+r] = stream[r*cols+c]
			}
		}
		copy(in[rows*cols:], stream[rows*cols:])
	}
	var z bytes.Buffer
	zw := zlib.NewWriter(&z)
	zw.Write(in)
	zw.Close()
	d := []byte(id)
	zip := byte(0)
	if transpose {
		zip = 1
	}
	d = append(d, zip, 0)
	d = binary.LittleEndian.AppendUint32(d, uint32(cols))
	d = binary.LittleEndian.AppendUint64(d, uint64(len(stream)))
	d = binary.LittleEndian.AppendUint64(d, uint64(z.Len()))
	return w.add("DZ", nil, append(d, z.Bytes()...))
}

// The channels of a CANedge (before firmware 01.07) CAN_DataFrame group:
// an 8-byte double Timestamp in ns, then
//
//	byte 8..11: bit 0 IDE, bits 1-2 BusChannel, bits 3-31 ID
//	byte 12:    bit 0 Dir, bits 1-7 DataLength
//	byte 13:    bit 0 EDL, bit 1 BRS, bit 2 ESI, bits 4-7 DLC
//	byte 14..21: the DataBytes offset in the signal data (VLSD)
func canedgeChans(w *mdfFile, kind string, data int64) []mdfCN {
	ts := mdfCN{name: "Timestamp", ctype: 2, sync: 1, dtype: 4, bits: 64, cc: w.cc(1, 0, 1e-9)}
	switch kind {
	case "CAN_ErrorFrame":
		return []mdfCN{ts, {name: kind, dtype: 10, byteOff: 8, bits: 8, members: []mdfCN{
			{name: kind + ".BusChannel", byteOff: 8, bits: 2},
			{name: kind + ".ErrorType", byteOff: 8, bitOff: 2, bits: 6},
		}}}
	case "CAN_RemoteFrame":
		return []mdfCN{ts, {name: kind, dtype: 10, byteOff: 8, bits: 48, members: []mdfCN{
			{name: kind + ".BusChannel", byteOff: 8, bitOff: 1, bits: 2},
			{name: kind + ".ID", byteOff: 8, bitOff: 3, bits: 29},
			{name: kind + ".IDE", byteOff: 8, bits: 1},
			{name: kind + ".DLC", byteOff: 13, bitOff: 4, bits: 4},
			{name: kind + ".DataLength", byteOff: 12, bitOff: 1, bits: 7},
			{name: kind + ".Dir", byteOff: 12, bits: 1},
		}}}
	}
	return []mdfCN{ts, {name: kind, dtype: 10, byteOff: 8, bits: 112, members: []mdfCN{
		{name: kind + ".BusChannel", byteOff: 8, bitOff: 1, bits: 2},
		{name: kind + ".ID", byteOff: 8, bitOff: 3, bits: 29},
		{name: kind + ".IDE", byteOff: 8, bits: 1},
		{name: kind + ".DLC", byteOff: 13, bitOff: 4, bits: 4},
		{name: kind + ".DataLength", byteOff: 12, bitOff: 1, bits: 7},
		{name: kind + ".DataBytes", ctype: 1, dtype: 10, byteOff: 14, bits: 64, data: data},
		{name: kind + ".Dir", byteOff: 12, bits: 1},
		{name: kind + ".EDL", byteOff: 13, bits: 1},
		{name: kind + ".ESI", byteOff: 13, bitOff: 2, bits: 1},
		{name: kind + ".BRS", byteOff: 13, bitOff: 1, bits: 1},
	}}}
}

// canedgeRecord returns the record bytes (without record id) of f in the
// CANedge layout, its DataBytes at signal data offset off.
func canedgeRecord(f *frame.Frame, off uint64) []byte {
	r := make([]byte, 22)
	binary.LittleEndian.PutUint64(r, math.Float64bits(float64(f.Time-mdfStart)))
	v := uint32(f.Bus+1)<<1 | f.ID<<3
	if f.Flags&frame.Extended != 0 {
		v |= 1
	}
	binary.LittleEndian.PutUint32(r[8:], v)
	r[12] = f.Len << 1
	dlc := f.Len
	if f.Flags&frame.FD != 0 {
		r[13] |= 1
		if f.Flags&frame.BRS != 0 {
			r[13] |= 2
		}
		if f.Flags&frame.ESI != 0 {
			r[13] |= 4
		}
		dlc = lenDLC(f.Len)
	}
	r[13] |= dlc << 4
	binary.LittleEndian.PutUint64(r[14:], off)
	return r
}

func lenDLC(n uint8) uint8 {
	for dlc := uint64(0); dlc < 16; dlc++ {
		if dlcLen(dlc, true) >= int(n) {
			return uint8(dlc)
		}
	}
	return 15
}

// buildCANedge writes frames in the unfinalized CANedge layout: one data
// group with 1-byte record ids, CAN_DataFrame (1) with its DataBytes in
// the VLSD group (2) written right after each frame's record,
// CAN_ErrorFrame (3), CAN_RemoteFrame (4), a LIN group (5) with a record
// every tenth frame to skip.
func buildCANedge(frames []frame.Frame, container int) []byte {
	w := newMDF(container == mdfDTOpen, 37, 2, 0)
	vlsd := w.cg(2, 1, 0, "", nil)
	cgs := []int64{
		w.cg(1, 6, 22, "CAN_DataFrame", canedgeChans(w, "CAN_DataFrame", vlsd)),
		vlsd,
		w.cg(3, 6, 9, "CAN_ErrorFrame", canedgeChans(w, "CAN_ErrorFrame", 0)),
		w.cg(4, 6, 14, "CAN_RemoteFrame", canedgeChans(w, "CAN_RemoteFrame", 0)),
		w.cg(5, 6, 19, "LIN_Frame", []mdfCN{{name: "Timestamp", ctype: 2, sync: 1, dtype: 4, bits: 64}}),
	}
	dg := w.dg(1, cgs...)
	var s []byte
	var off uint64
	for i := range frames {
		f := &frames[i]
		switch {
		case f.Flags&frame.Error != 0:
			r := canedgeRecord(f, 0)[:9]
			r[8] = f.Bus + 1
			s = append(append(s, 3), r...)
		case f.Flags&frame.Remote != 0:
			r := canedgeRecord(f, 0)[:14]
			r[13] = f.Len << 4
			s = append(append(s, 4), r...)
		default:
			s = append(append(s, 1), canedgeRecord(f, off)...)
			s = append(s, 2)
			s = binary.LittleEndian.AppendUint32(s, uint32(f.Len))
			s = append(s, f.Data[:f.Len]...)
			off += 4 + uint64(f.Len)
		}
		if i%10 == 9 {
			s = append(append(s, 5), make([]byte, 19)...)
		}
	}
	w.link(dg, 2, w.data(container, "DT", s, 23))
	return w.b
}

// buildSorted writes data frames in the finalized, sorted layout: one
// channel group a data group, record id size 0, DataBytes in signal
// data of the given container.
func buildSorted(frames []frame.Frame, container, sdContainer int) []byte {
	w := newMDF(false, 0, 2, 0)
	var s, sd []byte
	for i := range frames {
		f := &frames[i]
		s = append(s, canedgeRecord(f, uint64(len(sd)))...)
		sd = binary.LittleEndian.AppendUint32(sd, uint32(f.Len))
		sd = append(sd, f.Data[:f.Len]...)
	}
	sdLink := w.data(sdContainer, "SD", sd, 12)
	dg := w.dg(0, w.cg(1, 6, 22, "CAN_DataFrame", canedgeChans(w, "CAN_DataFrame", sdLink)))
	// An empty group of another kind, as CANedge writes them.
	w.dg(0, w.cg(3, 6, 9, "CAN_ErrorFrame", canedgeChans(w, "CAN_ErrorFrame", 0)))
	w.link(dg, 2, w.data(container, "DT", s, 22))
	return w.b
}

// build0107 writes classic frames in the layout of CANedge firmware
// 01.07: a group for each bus and id type, BusChannel, IDE and Dir
// constant (virtual channels whose conversion gives the value), a 48-bit
// Timestamp in µs, DataLength from DLC through a value table, 8 data
// bytes in the record.
func build0107(frames []frame.Frame, container int) []byte {
	w := newMDF(true, 37, 2, 0)
	table := w.cc(5, 0, 0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5, 6, 6, 7, 7, 8, 8, 9, 12, 10, 16, 11, 20, 12, 24, 13, 32, 14, 48, 15, 64)
	type key struct {
		bus uint8
		ext bool
	}
	ids := map[key]uint64{}
	var cgs []int64
	for _, bus := range []uint8{0, 1, 8} {
		for _, ext := range []bool{false, true} {
			id := uint64(len(cgs) + 32)
			ids[key{bus, ext}] = id
			idBits, dlcAt, dlcBit, dataAt, name := uint32(11), uint32(7), uint8(4), uint32(8), "_Rx"
			if ext {
				idBits, dlcAt, dlcBit, dataAt, name = 29, 10, 0, 11, "_Rx_IDE"
			}
			ide := 0.0
			if ext {
				ide = 1
			}
			chans := []mdfCN{
				{name: "Timestamp", ctype: 2, sync: 1, bits: 48, cc: w.cc(1, 0, 1e-6)},
				{name: "CAN_DataFrame", dtype: 10, byteOff: 6, bits: 8 * (dataAt + 8 - 6), members: []mdfCN{
					{name: "CAN_DataFrame.BusChannel", ctype: 6, cc: w.cc(1, float64(bus+1), 0)},
					{name: "CAN_DataFrame.ID", byteOff: 6, bits: idBits},
					{name: "CAN_DataFrame.IDE", ctype: 6, cc: w.cc(1, ide, 0)},
					{name: "CAN_DataFrame.DLC", byteOff: dlcAt, bitOff: dlcBit, bits: 4},
					{name: "CAN_DataFrame.DataLength", byteOff: dlcAt, bitOff: dlcBit, bits: 4, cc: table},
					{name: "CAN_DataFrame.DataBytes", dtype: 10, byteOff: dataAt, bits: 64},
					{name: "CAN_DataFrame.Dir", ctype: 6, cc: w.cc(1, 0, 0)},
				}},
			}
			cgs = append(cgs, w.cg(id, 6, dataAt+8, "CAN"+string('1'+rune(bus))+name, chans))
		}
	}
	dg := w.dg(1, cgs...)
	var s []byte
	for i := range frames {
		f := &frames[i]
		ext := f.Flags&frame.Extended != 0
		s = append(s, byte(ids[key{f.Bus, ext}]))
		n := len(s) + 6
		s = binary.LittleEndian.AppendUint64(s, uint64(f.Time-mdfStart)/1000)[:n]
		var d [8]byte
		copy(d[:], f.Data[:f.Len])
		if ext {
			s = binary.LittleEndian.AppendUint32(s, f.ID)
			s = append(s, f.Len)
		} else {
			s = binary.LittleEndian.AppendUint16(s, uint16(f.ID)|uint16(f.Len)<<12)
		}
		s = append(s, d[:]...)
	}
	w.link(dg, 2, w.data(container, "DT", s, 16))
	return w.b
}

// testFrames returns n frames of realistic traffic from mdfStart on:
// 11- and 29-bit ids on buses 0 and 1 (and 8 with bus8), 0 to 8 bytes,
// times in µs steps. With fd, every fifth frame is CAN FD of up to 64
// bytes; with kinds, every 13th is a remote and every 29th an error frame.
func testFrames(n int, fd, kinds, bus8 bool) []frame.Frame {
	rng := rand.New(rand.NewPCG(1, 2))
	out := make([]frame.Frame, n)
	t := int64(mdfStart)
	for i := range out {
		f := &out[i]
		t += 1000 * int64(1+rng.IntN(500))
		f.Time = t
		f.Bus = uint8(rng.IntN(2))
		if bus8 && i%3 == 0 {
			f.Bus = 8
		}
		if rng.IntN(3) == 0 {
			f.Flags = frame.Extended
			f.ID = rng.Uint32() & 0x1FFFFFFF
		} else {
			f.ID = rng.Uint32() & 0x7FF
		}
		f.Len = uint8(rng.IntN(9))
		switch {
		case kinds && i%29 == 28:
			*f = frame.Frame{Time: t, Bus: f.Bus, Flags: frame.Error}
			continue
		case kinds && i%13 == 12:
			f.Flags |= frame.Remote
			continue
		case fd && i%5 == 4:
			f.Flags |= frame.FD
			if rng.IntN(2) == 0 {
				f.Flags |= frame.BRS
			}
			if rng.IntN(3) == 0 {
				f.Flags |= frame.ESI
			}
			f.Len = uint8(dlcLen(uint64(rng.IntN(16)), true))
		}
		for j := range f.Len {
			f.Data[j] = byte(rng.Uint32())
		}
	}
	return out
}
