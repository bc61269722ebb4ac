package capture

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/yukart/candec/frame"
	"github.com/yukart/candec/internal/testkit/realdata"
)

var blfStart = time.Date(2024, 5, 13, 19, 14, 29, 870e6, time.UTC)

// blfFrames returns n frames of a busy bus: mostly 8-byte classic frames
// of a few dozen IDs on two channels, some 29-bit, remote and CAN FD, a
// frame every 50–250 µs from start.
func blfFrames(n int, start time.Time) []frame.Frame {
	fs := make([]frame.Frame, n)
	t := start.UnixNano()
	for i := range fs {
		f := &fs[i]
		t += int64(50_000 + (i*7919)%200_000)
		f.Time = t
		f.Bus = uint8(i % 3 / 2)
		f.ID = uint32(0x100 + (i*37)%48)
		f.Len = 8
		switch {
		case i%97 == 0:
			f.Flags, f.ID, f.Len = frame.FD|frame.BRS, 0x18DA00F1+uint32(i%5), 64
			f.Flags |= frame.Extended
		case i%89 == 0:
			f.Flags, f.Len = frame.Remote, uint8(i%9)
		case i%13 == 0:
			f.Flags, f.ID = frame.Extended, 0x18FEF100|uint32(i%7)
		case i%11 == 0:
			f.Len = uint8(i % 8)
		}
		if f.Flags&frame.Remote == 0 {
			for j := range f.Len {
				f.Data[j] = byte(i*31 + int(j))
			}
		}
	}
	return fs
}

// writeBLF returns frames (and, before each, the objects of extra) as a
// BLF file.
func writeBLF(t testing.TB, fs []frame.Frame, opts blfWriterOptions, extra func(w *blfWriter, i int)) []byte {
	t.Helper()
	var b bytes.Buffer
	w, err := newBLFWriter(&b, blfStart, opts)
	if err != nil {
		t.Fatal(err)
	}
	for i := range fs {
		if extra != nil {
			extra(w, i)
		}
		if err := w.WriteFrame(&fs[i]); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// readAll reads every frame of a BLF file up to the first error.
func readBLFAll(in []byte, opts Options) ([]frame.Frame, *BLFReader, error) {
	r := NewBLFReader(bytes.NewReader(in), opts)
	var fs []frame.Frame
	for {
		var f frame.Frame
		if err := r.Next(&f); err != nil {
			if err == io.EOF {
				err = nil
			}
			return fs, r, err
		}
		fs = append(fs, f)
	}
}

func TestBLFFormats(t *testing.T) {
	dir := formatsDir(t)
	n := 0
	for _, row := range formatIndex(t, dir) {
		if row.format != "Vector BLF" || strings.HasSuffix(row.file, ".gz") {
			continue
		}
		n++
		t.Run(row.file, func(t *testing.T) {
			got, err := os.Open(filepath.Join(dir, row.file))
			if err != nil {
				t.Fatal(err)
			}
			defer got.Close()
			want, err := os.Open(filepath.Join(dir, row.expected))
			if err != nil {
				t.Fatal(err)
			}
			defer want.Close()
			frames, errs := compareFrames(t, row.file, NewBLFReader(got, Options{}), want, time.Microsecond)
			if frames != row.frames || errs != row.errorFrames {
				t.Errorf("got %d frames and %d error frames, want %d and %d (INDEX.tsv)", frames, errs, row.frames, row.errorFrames)
			}
		})
	}
	if n == 0 {
		t.Fatal("INDEX.tsv lists no BLF file with expected frames")
	}
}

func TestBLFRoundTrip(t *testing.T) {
	fs := blfFrames(3000, blfStart)
	fs[5] = frame.Frame{Time: fs[5].Time, Flags: frame.Error, Bus: 1}
	fs[6].Flags, fs[6].Len = frame.FD|frame.ESI, 12
	fs[7].Flags, fs[7].Len = frame.FD, 0
	clear(fs[7].Data[:])
	clear(fs[6].Data[12:])
	fs[8].Bus = 255
	for _, tc := range []struct {
		name  string
		opts  blfWriterOptions
		extra func(w *blfWriter, i int)
	}{
		{name: "zlib, python-can's containers"},
		{name: "stored", opts: blfWriterOptions{Stored: true}},
		{name: "zlib, objects across 100-byte containers", opts: blfWriterOptions{ContainerSize: 100}},
		{name: "stored, objects across 7-byte containers", opts: blfWriterOptions{Stored: true, ContainerSize: 7}},
		{name: "header version 2", opts: blfWriterOptions{HeaderVersion: 2, ContainerSize: 999}},
		{name: "10 µs units", opts: blfWriterOptions{Time10us: true, Stored: true}},
		{name: "other objects between the frames", opts: blfWriterOptions{ContainerSize: 1000},
			extra: func(w *blfWriter, i int) {
				switch i % 4 {
				case 1: // an odd size, padded
					w.WriteObject(65, 0, []byte("an app text of an odd length"))
				case 2: // a large object across many containers
					w.WriteObject(96, 0, make([]byte, 5000+i%3))
				case 3: // a CAN_MESSAGE2 has more after the CAN_MESSAGE fields
					f := fs[i]
					if f.Flags&(frame.FD|frame.Error|frame.Remote) == 0 && f.Bus == 0 {
						b := make([]byte, blfCANMessageBody+8)
						binary.LittleEndian.PutUint16(b, 1)
						b[3] = f.Len
						binary.LittleEndian.PutUint32(b[4:], f.ID|uint32(f.Flags&frame.Extended)<<31)
						copy(b[8:], f.Payload())
						w.WriteObject(blfCANMessage2, uint64(f.Time-w.start), b)
					}
				}
			}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in := writeBLF(t, fs, tc.opts, tc.extra)
			got, r, err := readBLFAll(in, Options{})
			if err != nil {
				t.Fatal(err)
			}
			var want []frame.Frame
			for i, f := range fs {
				if tc.extra != nil && i%4 == 3 && f.Flags&(frame.FD|frame.Error|frame.Remote) == 0 && f.Bus == 0 {
					want = append(want, f)
				}
				if tc.opts.Time10us {
					f.Time = blfStart.UnixNano() + (f.Time-blfStart.UnixNano())/10000*10000
				}
				want = append(want, f)
			}
			if len(got) != len(want) {
				t.Fatalf("got %d frames, want %d", len(got), len(want))
			}
			for i := range got {
				if got[i] != want[i] {
					t.Fatalf("frame %d: got %+v, want %+v", i, got[i], want[i])
				}
			}
			for _, b := range []uint8{0, 1, 255} {
				if got, want := r.Interface(b), "can"+strconv.Itoa(int(b)); got != want {
					t.Errorf("Interface(%d) = %q, want %q", b, got, want)
				}
			}
			if r.Interface(2) != "" {
				t.Errorf("Interface(2) = %q, want \"\"", r.Interface(2))
			}
		})
	}
}

// blfFile builds a file from a header and raw top-level bytes.
func blfFile(top ...[]byte) []byte {
	b := blfFileHeader(blfStart)
	for _, t := range top {
		b = append(b, t...)
	}
	return b
}

// blfObj returns an object of version 1 with ns timestamp ts.
func blfObj(typ uint32, ts uint64, body []byte) []byte {
	return appendBLFObject(nil, typ, 1, 2, ts, body)
}

// canBody returns a CAN_MESSAGE body.
func canBody(ch uint16, flags uint8, dlc uint8, id uint32, data ...byte) []byte {
	b := make([]byte, blfCANMessageBody)
	binary.LittleEndian.PutUint16(b, ch)
	b[2], b[3] = flags, dlc
	binary.LittleEndian.PutUint32(b[4:], id)
	copy(b[8:], data)
	return b
}

func stored(objs ...[]byte) []byte { return appendBLFContainer(nil, 0, bytes.Join(objs, nil)) }
func zipped(objs ...[]byte) []byte { return appendBLFContainer(nil, 2, bytes.Join(objs, nil)) }

func TestBLFFrames(t *testing.T) {
	start := blfStart.UnixNano()
	fd := func(ch uint16, flags, dlc uint8, id uint32, fdflags, valid uint8) []byte {
		b := make([]byte, blfCANFDMessageBody)
		binary.LittleEndian.PutUint16(b, ch)
		b[2], b[3], b[13], b[14] = flags, dlc, fdflags, valid
		binary.LittleEndian.PutUint32(b[4:], id)
		for i := range 64 {
			b[20+i] = byte(i + 1)
		}
		return b
	}
	fd64 := func(ch, dlc, valid uint8, id, flags uint32) []byte {
		b := make([]byte, blfCANFD64Body+int(valid))
		b[0], b[1], b[2] = ch, dlc, valid
		binary.LittleEndian.PutUint32(b[4:], id)
		binary.LittleEndian.PutUint32(b[12:], flags)
		for i := range valid {
			b[blfCANFD64Body+int(i)] = byte(i + 1)
		}
		return b
	}
	seq := func(n int) (d [64]byte) {
		for i := range n {
			d[i] = byte(i + 1)
		}
		return d
	}
	tests := []struct {
		name string
		obj  []byte
		want frame.Frame
	}{
		{"CAN_MESSAGE 11-bit", blfObj(1, 1500, canBody(1, 0, 3, 0x123, 1, 2, 3, 4)),
			frame.Frame{Time: start + 1500, ID: 0x123, Len: 3, Data: seq(3)}},
		{"CAN_MESSAGE 29-bit, channel 3", blfObj(1, 0, canBody(3, 0, 8, 0x80000000|0x18FEF100, 1, 2, 3, 4, 5, 6, 7, 8)),
			frame.Frame{Time: start, ID: 0x18FEF100, Flags: frame.Extended, Bus: 2, Len: 8, Data: seq(8)}},
		{"CAN_MESSAGE DLC 15 keeps 8 bytes", blfObj(1, 0, canBody(1, 0, 15, 0x1, 1, 2, 3, 4, 5, 6, 7, 8)),
			frame.Frame{Time: start, ID: 1, Len: 8, Data: seq(8)}},
		{"CAN_MESSAGE remote, DLC 5, data ignored", blfObj(1, 0, canBody(1, 0x80, 5, 0x300, 9, 9, 9)),
			frame.Frame{Time: start, ID: 0x300, Flags: frame.Remote, Len: 5}},
		{"CAN_MESSAGE2 (its extra fields after)", blfObj(86, 0, append(canBody(2, 0, 2, 0x7FF, 1, 2), make([]byte, 8)...)),
			frame.Frame{Time: start, ID: 0x7FF, Bus: 1, Len: 2, Data: seq(2)}},
		{"10 µs units", appendBLFObject(nil, 1, 1, 1, 7, canBody(1, 0, 0, 0x10)),
			frame.Frame{Time: start + 70_000, ID: 0x10}},
		{"header version 2", appendBLFObject(nil, 1, 2, 2, 9, canBody(1, 0, 1, 0x10, 1)),
			frame.Frame{Time: start + 9, ID: 0x10, Len: 1, Data: seq(1)}},
		{"CAN_FD_MESSAGE, BRS, ESI, 12 valid bytes", blfObj(100, 0, fd(1, 0, 9, 0x123, 7, 12)),
			frame.Frame{Time: start, ID: 0x123, Flags: frame.FD | frame.BRS | frame.ESI, Len: 12, Data: seq(12)}},
		{"CAN_FD_MESSAGE 64 bytes", blfObj(100, 0, fd(1, 0, 15, 0x80000123, 1, 64)),
			frame.Frame{Time: start, ID: 0x123, Flags: frame.FD | frame.Extended, Len: 64, Data: seq(64)}},
		{"CAN_FD_MESSAGE without EDL is classic", blfObj(100, 0, fd(1, 0, 8, 0x123, 0, 8)),
			frame.Frame{Time: start, ID: 0x123, Len: 8, Data: seq(8)}},
		{"CAN_FD_MESSAGE remote", blfObj(100, 0, fd(1, 0x80, 4, 0x123, 0, 0)),
			frame.Frame{Time: start, ID: 0x123, Flags: frame.Remote, Len: 4}},
		{"CAN_FD_MESSAGE_64 channel 7, BRS", blfObj(101, 0, fd64(7, 15, 64, 0x6A9, 0x3000)),
			frame.Frame{Time: start, ID: 0x6A9, Flags: frame.FD | frame.BRS, Bus: 6, Len: 64, Data: seq(64)}},
		{"CAN_FD_MESSAGE_64 ESI, 20 bytes", blfObj(101, 0, fd64(1, 11, 20, 0x80000001, 0x5000)),
			frame.Frame{Time: start, ID: 1, Flags: frame.FD | frame.ESI | frame.Extended, Len: 20, Data: seq(20)}},
		{"CAN_FD_MESSAGE_64 classic", blfObj(101, 0, fd64(1, 3, 3, 0x5, 0)),
			frame.Frame{Time: start, ID: 5, Len: 3, Data: seq(3)}},
		{"CAN_FD_MESSAGE_64 remote", blfObj(101, 0, fd64(1, 8, 0, 0x5, 0x1010)),
			frame.Frame{Time: start, ID: 5, Flags: frame.Remote, Len: 8}},
		{"CAN_FD_MESSAGE_64 with fewer data bytes than valid: zeros", blfObj(101, 0, fd64(1, 15, 64, 0x6A9, 0x1000)[:blfCANFD64Body+48]),
			frame.Frame{Time: start, ID: 0x6A9, Flags: frame.FD, Len: 64, Data: seq(48)}},
		{"CAN_FD_MESSAGE_64 data up to its ext data offset", blfObj(101, 0, func() []byte {
			b := fd64(1, 15, 64, 0x6A9, 0x1000)
			b[35] = 32 + blfCANFD64Body + 10
			return b
		}()), frame.Frame{Time: start, ID: 0x6A9, Flags: frame.FD, Len: 64, Data: seq(10)}},
		{"CAN_FD_MESSAGE_64 with more after its data", blfObj(101, 0, append(fd64(1, 2, 2, 0x5, 0x1000), 0xEE, 0xEE, 0xEE)),
			frame.Frame{Time: start, ID: 5, Flags: frame.FD, Len: 2, Data: seq(2)}},
		{"CAN_ERROR_EXT", blfObj(73, 3, func() []byte {
			b := make([]byte, blfCANErrorExtBody)
			b[0], b[10], b[16] = 2, 8, 0x55
			return b
		}()), frame.Frame{Time: start + 3, Flags: frame.Error, Bus: 1}},
		{"CAN_ERROR_EXT on channel 0x1111 is on bus 255", blfObj(73, 0, func() []byte {
			b := make([]byte, blfCANErrorExtBody)
			b[0], b[1] = 0x11, 0x11
			return b
		}()), frame.Frame{Time: start, Flags: frame.Error, Bus: 255}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			for _, c := range []func(...[]byte) []byte{stored, zipped} {
				other := blfObj(65, 0, []byte("xyz"))
				got, _, err := readBLFAll(blfFile(c(other, tc.obj, other)), Options{})
				if err != nil {
					t.Fatal(err)
				}
				if len(got) != 1 || got[0] != tc.want {
					t.Fatalf("got %+v, want [%+v]", got, tc.want)
				}
			}
		})
	}
}

func TestBLFZeroStartTime(t *testing.T) {
	in := blfFileHeader(time.Time{})
	in = append(in, stored(blfObj(1, 2e9, canBody(1, 0, 0, 1)))...)
	got, _, err := readBLFAll(in, Options{})
	if err != nil || len(got) != 1 || got[0].Time != 2e9 {
		t.Fatalf("got %+v, %v; want one frame at 2 s", got, err)
	}
}

func TestBLFEnds(t *testing.T) {
	obj := blfObj(1, 0, canBody(1, 0, 0, 1))
	odd := blfObj(65, 0, []byte("x")) // size 33, 1 byte of padding
	tests := []struct {
		name string
		in   []byte
		n    int
	}{
		{"no objects", blfFile(), 0},
		{"an empty container", blfFile(stored()), 0},
		{"a top-level object of odd size, its padding cut", blfFile(stored(obj), odd[:len(odd)-1]), 1},
		{"a top-level object of odd size", blfFile(stored(obj), odd), 1},
		{"a container ending in padding", blfFile(stored(obj, odd)), 1},
		{"a container ending without the last padding", blfFile(stored(obj, odd[:len(odd)-1])), 1},
		{"padding of python-can's reader: up to 4 bytes", blfFile(stored(obj, []byte{0, 0, 0, 0}, obj)), 2},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, _, err := readBLFAll(tc.in, Options{})
			if err != nil || len(got) != tc.n {
				t.Fatalf("got %d frames, %v; want %d and io.EOF", len(got), err, tc.n)
			}
		})
	}
}

func TestBLFBadInput(t *testing.T) {
	obj := blfObj(1, 0, canBody(1, 0, 0, 1))
	const first = 144 + 32 // the first object in the first stored container
	big := func(b []byte, at int, v uint32) []byte {
		b = bytes.Clone(b)
		binary.LittleEndian.PutUint32(b[at:], v)
		return b
	}
	cutZip := zipped(bytes.Repeat(obj, 100))
	badZip := zipped(bytes.Repeat(obj, 100))
	badZip[60] ^= 0xFF
	tests := []struct {
		name   string
		in     []byte
		frames int    // before the error
		off    int64  // of the error
		msg    string // in the error
		next   bool   // Next goes on after the error
	}{
		{"empty", nil, 0, 0, `no BLF file signature`, false},
		{"not BLF", []byte("(1.0) can0 123#"), 0, 0, `no BLF file signature`, false},
		{"file header cut", blfFile()[:100], 0, 100, "file header of 144 bytes cut short", false},
		{"file header size 4 GB", big(blfFile(), 4, 0xFFFFFFFF), 0, 4, "file header size 4294967295", false},
		{"bad start time", func() []byte { b := blfFile(); b[42] = 13; return b }(), 0, 40, "start time: month 13", false},
		{"garbage after the header", blfFile([]byte("LOGGLOGG")), 0, 144, `no object signature`, false},
		{"bytes after the last object", blfFile(stored(obj), []byte{0, 0, 0, 0, 0}), 1, first + 48, "the file ends with 5 bytes that are not an object", false},
		{"object header cut", blfFile(stored(obj), obj[:10]), 1, first + 48, "object header cut short", false},
		{"top-level object cut", blfFile(blfObj(65, 0, make([]byte, 40))[:50]), 0, 144, "object of 72 bytes cut short", false},
		{"top-level object size 3", blfFile(big(obj, 8, 3)), 0, 144, "object size 3 is below its header's 16", false},
		{"container size 4 GB", blfFile(big(stored(obj), 8, 0xFFFFFFFF)), 0, 144, "log container of 4294967263 bytes", false},
		{"container uncompressed size 4 GB", blfFile(big(zipped(obj), 24, 0xFFFFFFFF)), 0, 144, "4294967295 bytes uncompressed", false},
		{"container size 20", blfFile(big(stored(obj), 8, 20)), 0, 144, "log container size 20 is below", false},
		{"compression method 1", blfFile(func() []byte { b := stored(obj); b[16] = 1; return b }()), 0, 144, "compression method 1", false},
		{"stored container cut", blfFile(stored(obj, obj, obj))[:first+100], 2, 144, "the file ends at byte 276, inside this container's 144 bytes", false},
		{"zlib container cut", blfFile(cutZip[:len(cutZip)-20]), 49, 144, "the file ends at byte 224, inside this compressed container's 66 bytes", false},
		{"corrupt zlib data", blfFile(badZip), 0, 144, "compressed container: byte", false},
		{"object cut at the end of the last container", blfFile(stored(obj, obj[:20])), 1, first + 48, "object of 48 bytes cut short: the data ends after 20", false},
		{"object cut in a zlib container", blfFile(zipped(obj, obj[:20])), 1, 144, "object at byte 48 of the compressed container's data: object of 48 bytes cut short", false},
		{"object size 4 GB", blfFile(stored(big(obj, 8, 0xFFFFFFFF))), 0, first, "object of 4294967295 bytes cut short", false},
		{"CAN object size 2000", blfFile(stored(big(obj, 8, 2000), make([]byte, 2000-48), obj)), 0, first, "size 2000 is above the 1024", true},
		{"other object of 4 GB", blfFile(stored(big(blfObj(65, 0, nil), 8, 0xFFFFFFFF))), 0, first, "object of 4294967295 bytes cut short", false},
		{"object size 8 in a container", blfFile(stored(big(obj, 8, 8))), 0, first, "object size 8 is below", false},
		{"no signature after an object", blfFile(stored(obj, []byte("12345678"), obj)), 1, first + 48, `no object signature`, false},
		{"channel 0", blfFile(stored(blfObj(1, 0, canBody(0, 0, 0, 1)), obj)), 0, first, "channel 0 is outside 1 to 256", true},
		{"channel 257", blfFile(stored(blfObj(1, 0, canBody(257, 0, 0, 1)), obj)), 0, first, "channel 257", true},
		{"channel 0 in a zlib container", blfFile(zipped(obj, blfObj(1, 0, canBody(0, 0, 0, 1)), obj)), 1, 144, "object at byte 48 of the compressed container's data: channel 0", true},
		{"11-bit ID above 0x7FF", blfFile(stored(blfObj(1, 0, canBody(1, 0, 0, 0x4444444)), obj)), 0, first, "11-bit ID 0x4444444", true},
		{"29-bit ID above 0x1FFFFFFF", blfFile(stored(blfObj(1, 0, canBody(1, 0, 0, 0xF0000000)), obj)), 0, first, "29-bit ID 0x70000000", true},
		{"header version 3", blfFile(stored(appendBLFObject(nil, 1, 3, 2, 0, canBody(1, 0, 0, 1)), obj)), 0, first, "header version 3", true},
		{"CAN_MESSAGE too short", blfFile(stored(blfObj(1, 0, make([]byte, 12)), obj)), 0, first, "size 44 is below its header and body's 48", true},
		{"CAN_FD_MESSAGE 65 valid bytes", blfFile(stored(blfObj(100, 0, func() []byte {
			b := make([]byte, blfCANFDMessageBody)
			b[0], b[14] = 1, 65
			return b
		}()), obj)), 0, first, "65 valid data bytes", true},
		{"CAN_FD_MESSAGE_64 65 valid bytes", blfFile(stored(blfObj(101, 0, func() []byte {
			b := make([]byte, blfCANFD64Body+65)
			b[0], b[2] = 1, 65
			return b
		}()), obj)), 0, first, "65 valid data bytes", true},
		{"header size 40 for version 1", blfFile(stored(func() []byte {
			b := bytes.Clone(obj)
			b[4] = 40
			return b
		}(), obj)), 0, first, "header size 40, want 32 for header version 1", true},
		{"timestamp past 2262", blfFile(stored(blfObj(1, 1<<63, canBody(1, 0, 0, 1)), obj)), 0, first, "timestamp 9223372036854775808", true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := NewBLFReader(bytes.NewReader(tc.in), Options{})
			var f frame.Frame
			n := 0
			var err error
			for err = r.Next(&f); err == nil; err = r.Next(&f) {
				n++
			}
			var oe *OffsetError
			if !errors.As(err, &oe) {
				t.Fatalf("after %d frames: got %v, want an *OffsetError", n, err)
			}
			if n != tc.frames || oe.Offset != tc.off || oe.Format != "blf" || !strings.Contains(oe.Msg, tc.msg) {
				t.Fatalf("got %d frames, then %q at %d; want %d frames, then %q at byte %d", n, oe.Msg, oe.Offset, tc.frames, tc.msg, tc.off)
			}
			err2 := r.Next(&f)
			switch {
			case tc.next && err2 != nil:
				t.Fatalf("after the error: got %v, want the next frame", err2)
			case !tc.next && err2 != err:
				t.Fatalf("after the error: got %v, want the same error again", err2)
			}
			if tc.next {
				// With SkipInvalid the bad object is counted, not returned.
				got, r, err := readBLFAll(tc.in, Options{SkipInvalid: true})
				if err != nil || len(got) != n+1 || r.Skipped() != 1 {
					t.Fatalf("SkipInvalid: got %d frames, %d skipped, %v; want %d, 1 and io.EOF", len(got), r.Skipped(), err, n+1)
				}
			}
		})
	}
}

func TestBLFSkipInvalidContainer(t *testing.T) {
	obj := blfObj(1, 0, canBody(1, 0, 0, 1))
	bad := stored(obj)
	bad[16] = 7
	got, r, err := readBLFAll(blfFile(stored(obj), bad, zipped(obj)), Options{SkipInvalid: true})
	if err != nil || len(got) != 2 || r.Skipped() != 1 {
		t.Fatalf("got %d frames, %d skipped, %v; want 2, 1 and io.EOF", len(got), r.Skipped(), err)
	}
}

func TestDetectBLF(t *testing.T) {
	hdr := blfFile()
	tests := []struct {
		head []byte
		want bool
	}{
		{hdr, true},
		{hdr[:4], true},
		{hdr[:6], true},
		{[]byte("LOG"), false},
		{[]byte("(1696868256.123456) can0 123#"), false},
		{big32(hdr, 4, 16), false},
		{nil, false},
	}
	for _, tc := range tests {
		if got := detectBLF(tc.head); got != tc.want {
			t.Errorf("detectBLF(%q) = %v, want %v", tc.head[:min(len(tc.head), 12)], got, tc.want)
		}
	}
}

func big32(b []byte, at int, v uint32) []byte {
	b = bytes.Clone(b)
	binary.LittleEndian.PutUint32(b[at:], v)
	return b
}

// TestBLFAllocs pins the steady state: no allocation per frame from
// stored containers; from zlib ones, none per frame and a bounded number
// per container (the standard library's inflater allocates its Huffman
// tables for each deflate block, about 30, and its checksum).
func TestBLFAllocs(t *testing.T) {
	const perRun = 1000
	fs := blfFrames(15*perRun, blfStart)
	t.Run("stored", func(t *testing.T) {
		r := NewBLFReader(bytes.NewReader(writeBLF(t, fs, blfWriterOptions{Stored: true}, nil)), Options{})
		var f frame.Frame
		read := func() {
			for range perRun {
				if err := r.Next(&f); err != nil {
					t.Fatal(err)
				}
			}
		}
		read() // the interface names
		if got := testing.AllocsPerRun(10, read); got != 0 {
			t.Errorf("got %v allocations per %d frames, want 0", got, perRun)
		}
	})
	t.Run("zlib", func(t *testing.T) {
		const perContainer, reader = 40, 30
		var b bytes.Buffer
		w, _ := newBLFWriter(&b, blfStart, blfWriterOptions{ContainerSize: 8 << 10})
		for i := range fs {
			w.WriteFrame(&fs[i])
		}
		w.Close()
		var f frame.Frame
		got := testing.AllocsPerRun(3, func() {
			r := NewBLFReader(bytes.NewReader(b.Bytes()), Options{})
			for r.Next(&f) == nil {
			}
		})
		if want := float64(reader + perContainer*w.containers); got > want {
			t.Errorf("got %v allocations for %d frames in %d containers, want at most %v", got, len(fs), w.containers, want)
		}
	})
}

func BenchmarkReadBLF(b *testing.B) {
	fs := blfFrames(200_000, blfStart)
	for _, tc := range []struct {
		name string
		opts blfWriterOptions
	}{
		{"stored", blfWriterOptions{Stored: true}},
		{"zlib", blfWriterOptions{}},
	} {
		b.Run(tc.name, func(b *testing.B) {
			in := writeBLF(b, fs, tc.opts, nil)
			b.SetBytes(int64(len(in)))
			b.ReportAllocs()
			var f frame.Frame
			n := 0
			for b.Loop() {
				r := NewBLFReader(bytes.NewReader(in), Options{})
				for r.Next(&f) == nil {
					n++
				}
			}
			b.ReportMetric(float64(n)/b.Elapsed().Seconds(), "frames/s")
		})
	}
}

func FuzzBLF(f *testing.F) {
	if dir, ok := blfFormatsDir(); ok {
		for _, name := range []string{"issue_1905.blf", "test_CanErrorFrameExt.blf", "eldominio_civic8th_acswitch.blf"} {
			if b, err := os.ReadFile(filepath.Join(dir, name)); err == nil {
				f.Add(b[:min(len(b), 1024)])
			}
		}
	}
	fs := blfFrames(40, blfStart)
	for _, opts := range []blfWriterOptions{{}, {Stored: true, ContainerSize: 50}, {HeaderVersion: 2, ContainerSize: 300}} {
		f.Add(writeBLF(f, fs, opts, nil))
	}
	obj := blfObj(1, 0, canBody(1, 0, 8, 0x80000123, 1, 2, 3))
	f.Add(blfFile(stored(obj, blfObj(65, 0, []byte("x")), obj), zipped(obj)))
	f.Fuzz(func(t *testing.T, in []byte) {
		for _, opts := range []Options{{}, {SkipInvalid: true}} {
			r := NewBLFReader(bytes.NewReader(in), opts)
			var fr frame.Frame
			for i := 0; ; i++ {
				if i > 1<<26 {
					t.Fatal("more than 64 M calls of Next")
				}
				err := r.Next(&fr)
				if err == io.EOF {
					break
				}
				if err != nil {
					var oe *OffsetError
					if !errors.As(err, &oe) {
						t.Fatalf("got %v, want an *OffsetError", err)
					}
					if r.err != nil {
						if r.Next(&fr) != err {
							t.Fatalf("after %v: Next gives another result", err)
						}
						break // the stream ended
					}
					continue
				}
				if fr.Len > frame.MaxLen || (fr.Flags&frame.FD == 0 && fr.Len > 8) {
					t.Fatalf("frame %+v: length %d", fr, fr.Len)
				}
				for _, b := range fr.Data[fr.Len:] {
					if b != 0 {
						t.Fatalf("frame %+v: data past its length", fr)
					}
				}
				if r.Interface(fr.Bus) == "" {
					t.Fatalf("frame on bus %d without an interface name", fr.Bus)
				}
			}
		}
	})
}

// blfFormatsDir is formatsDir for a fuzz target's seeds, which must
// not skip.
func blfFormatsDir() (string, bool) {
	d, ok := realdata.Path()
	return filepath.Join(d, "formats"), ok
}
