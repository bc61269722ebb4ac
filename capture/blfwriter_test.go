package capture

import (
	"bytes"
	"compress/zlib"
	"encoding/binary"
	"errors"
	"io"
	"time"

	"github.com/yukart/candec/frame"
)

// blfWriterOptions tune a blfWriter. The zero value writes as python-can
// does: zlib containers of 128 KiB, object header version 1, ns
// timestamps.
type blfWriterOptions struct {
	// Stored writes the containers uncompressed (method 0).
	Stored bool
	// ContainerSize is the data of a container; objects run across
	// containers at this size. 0 means 128 KiB.
	ContainerSize int
	// HeaderVersion of the objects: 1 (32-byte header) or 2 (40 bytes).
	HeaderVersion int
	// Time10us writes timestamps in 10 µs units instead of ns.
	Time10us bool
}

// blfWriter writes frames as a Vector BLF file: CAN_MESSAGE for classic
// frames, CAN_FD_MESSAGE_64 for CAN FD frames, CAN_ERROR_EXT for error
// frames, channel Bus+1. The file header is written first with the start
// time and zero counts and sizes (a writer to a non-seekable stream
// cannot know them; readers do not need them).
type blfWriter struct {
	w       io.Writer
	opts    blfWriterOptions
	start   int64  // ns since the Unix epoch, whole milliseconds
	pending []byte // objects not yet in a container
	zbuf    bytes.Buffer
	zw      *zlib.Writer
	err     error
	// containers counts the containers written.
	containers int
}

// newBLFWriter writes the file header to w, with start (cut to the
// millisecond, as SYSTEMTIME holds it) as the file's start time.
func newBLFWriter(w io.Writer, start time.Time, opts blfWriterOptions) (*blfWriter, error) {
	if opts.ContainerSize <= 0 {
		opts.ContainerSize = 128 << 10
	}
	if opts.HeaderVersion == 0 {
		opts.HeaderVersion = 1
	}
	start = start.UTC().Truncate(time.Millisecond)
	bw := &blfWriter{w: w, opts: opts, start: start.UnixNano()}
	_, err := w.Write(blfFileHeader(start))
	return bw, err
}

// blfFileHeader returns a 144-byte file header with start as start time.
func blfFileHeader(start time.Time) []byte {
	h := make([]byte, 144)
	copy(h, "LOGG")
	binary.LittleEndian.PutUint32(h[4:], 144)
	h[8] = 5 // application: python-can's id
	if !start.IsZero() {
		st := []int{start.Year(), int(start.Month()), int(start.Weekday()), start.Day(),
			start.Hour(), start.Minute(), start.Second(), start.Nanosecond() / 1e6}
		for i, v := range st {
			binary.LittleEndian.PutUint16(h[40+2*i:], uint16(v))
		}
	}
	return h
}

// WriteFrame writes one frame.
func (w *blfWriter) WriteFrame(f *frame.Frame) error {
	ts := f.Time - w.start
	if ts < 0 {
		return errors.New("blf: frame before the file's start time")
	}
	if w.opts.Time10us {
		ts /= 10000
	}
	ch := uint16(f.Bus) + 1
	id := f.ID
	if f.Flags&frame.Extended != 0 {
		id |= blfExtendedID
	}
	switch {
	case f.Flags&frame.Error != 0:
		b := make([]byte, blfCANErrorExtBody)
		binary.LittleEndian.PutUint16(b, ch)
		return w.WriteObject(blfCANErrorExt, uint64(ts), b)
	case f.Flags&frame.FD != 0:
		b := make([]byte, blfCANFD64Body+int(f.Len))
		b[0], b[1], b[2] = uint8(ch), fdDLC(f.Len), f.Len
		binary.LittleEndian.PutUint32(b[4:], id)
		fl := uint32(blfFD64FDF)
		if f.Flags&frame.BRS != 0 {
			fl |= blfFD64BRS
		}
		if f.Flags&frame.ESI != 0 {
			fl |= blfFD64ESI
		}
		binary.LittleEndian.PutUint32(b[12:], fl)
		copy(b[blfCANFD64Body:], f.Payload())
		return w.WriteObject(blfCANFDMessage64, uint64(ts), b)
	default:
		b := make([]byte, blfCANMessageBody)
		binary.LittleEndian.PutUint16(b, ch)
		if f.Flags&frame.Remote != 0 {
			b[2] = blfRemote
		} else {
			copy(b[8:], f.Payload())
		}
		b[3] = f.Len
		binary.LittleEndian.PutUint32(b[4:], id)
		return w.WriteObject(blfCANMessage, uint64(ts), b)
	}
}

// fdDLC is the CAN FD DLC of a data length.
func fdDLC(n uint8) uint8 {
	for dlc, l := range [...]uint8{0, 1, 2, 3, 4, 5, 6, 7, 8, 12, 16, 20, 24, 32, 48, 64} {
		if n <= l {
			return uint8(dlc)
		}
	}
	return 15
}

// WriteObject writes an object of type typ with timestamp ts (in the
// writer's unit) and body into the container stream.
func (w *blfWriter) WriteObject(typ uint32, ts uint64, body []byte) error {
	if w.err != nil {
		return w.err
	}
	flags := uint32(2)
	if w.opts.Time10us {
		flags = blfTime10us
	}
	w.pending = appendBLFObject(w.pending, typ, w.opts.HeaderVersion, flags, ts, body)
	for len(w.pending) >= w.opts.ContainerSize && w.err == nil {
		w.container(w.opts.ContainerSize)
	}
	return w.err
}

// appendBLFObject appends an object with a header of version hver (1 or
// 2) and its padding to dst.
func appendBLFObject(dst []byte, typ uint32, hver int, flags uint32, ts uint64, body []byte) []byte {
	hlen := 32
	if hver == 2 {
		hlen = 40
	}
	size := hlen + len(body)
	h := make([]byte, hlen)
	copy(h, "LOBJ")
	binary.LittleEndian.PutUint16(h[4:], uint16(hlen))
	binary.LittleEndian.PutUint16(h[6:], uint16(hver))
	binary.LittleEndian.PutUint32(h[8:], uint32(size))
	binary.LittleEndian.PutUint32(h[12:], typ)
	binary.LittleEndian.PutUint32(h[16:], flags)
	binary.LittleEndian.PutUint64(h[24:], ts)
	dst = append(dst, h...)
	dst = append(dst, body...)
	return append(dst, make([]byte, size%4)...)
}

// appendBLFContainer appends a log container of method (0 stored, 2
// zlib) holding data, as it is in the file.
func appendBLFContainer(dst []byte, method uint16, data []byte) []byte {
	payload := data
	if method == blfCompDeflate {
		var b bytes.Buffer
		zw := zlib.NewWriter(&b)
		zw.Write(data)
		zw.Close()
		payload = b.Bytes()
	}
	size := blfContainerHead + len(payload)
	h := make([]byte, blfContainerHead)
	copy(h, "LOBJ")
	binary.LittleEndian.PutUint16(h[4:], blfBaseHeader)
	binary.LittleEndian.PutUint16(h[6:], 1)
	binary.LittleEndian.PutUint32(h[8:], uint32(size))
	binary.LittleEndian.PutUint32(h[12:], blfLogContainer)
	binary.LittleEndian.PutUint16(h[16:], method)
	binary.LittleEndian.PutUint32(h[24:], uint32(len(data)))
	dst = append(dst, h...)
	dst = append(dst, payload...)
	return append(dst, make([]byte, size%4)...)
}

// container writes the first n bytes of the pending objects as one
// container.
func (w *blfWriter) container(n int) {
	data := w.pending[:n]
	var h [blfContainerHead]byte
	copy(h[:], "LOBJ")
	binary.LittleEndian.PutUint16(h[4:], blfBaseHeader)
	binary.LittleEndian.PutUint16(h[6:], 1)
	binary.LittleEndian.PutUint32(h[12:], blfLogContainer)
	binary.LittleEndian.PutUint32(h[24:], uint32(n))
	payload := data
	if !w.opts.Stored {
		binary.LittleEndian.PutUint16(h[16:], blfCompDeflate)
		w.zbuf.Reset()
		if w.zw == nil {
			w.zw = zlib.NewWriter(&w.zbuf)
		} else {
			w.zw.Reset(&w.zbuf)
		}
		w.zw.Write(data)
		if w.err = w.zw.Close(); w.err != nil {
			return
		}
		payload = w.zbuf.Bytes()
	}
	size := blfContainerHead + len(payload)
	binary.LittleEndian.PutUint32(h[8:], uint32(size))
	var pad [3]byte
	for _, b := range [][]byte{h[:], payload, pad[:size%4]} {
		if _, w.err = w.w.Write(b); w.err != nil {
			return
		}
	}
	w.pending = w.pending[:copy(w.pending, w.pending[n:])]
	w.containers++
}

// Close writes the objects still pending as a last container.
func (w *blfWriter) Close() error {
	if len(w.pending) > 0 && w.err == nil {
		w.container(len(w.pending))
	}
	return w.err
}
