package rawbatch

import (
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"strings"
	"testing"

	"github.com/yukart/candec/frame"
)

// unhex turns a hex dump with spaces and newlines into bytes.
func unhex(t testing.TB, s string) []byte {
	t.Helper()
	b, err := hex.DecodeString(strings.Join(strings.Fields(s), ""))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func mkFrame(time int64, id uint32, flags frame.Flags, bus uint8, data ...byte) frame.Frame {
	f := frame.Frame{Time: time, ID: id, Flags: flags, Bus: bus, Len: uint8(len(data))}
	copy(f.Data[:], data)
	return f
}

// Hand-written vectors: header, then one 24-byte line per frame.
var parseTests = []struct {
	name   string
	in     string
	seq    uint64
	frames []frame.Frame
}{
	{
		name: "empty batch",
		in:   "01 00 0000 0700000000000000",
		seq:  7,
	},
	{
		name: "one standard frame",
		in: "01 00 0100 2a00000000000000" +
			"0001020304050607 23010000 04 00 0000 deadbeef00000000",
		seq:    42,
		frames: []frame.Frame{mkFrame(0x0706050403020100, 0x123, 0, 0, 0xde, 0xad, 0xbe, 0xef)},
	},
	{
		name: "extended, remote, error and empty frames on several buses",
		in: "01 00 0400 ffffffffffffff00" +
			"0100000000000000 4d3c2b9a 08 01 0000 0102030405060708" + // 0x1A2B3C4D | EFF
			"0200000000000000 23010040 03 00 0000 0000000000000000" + // 0x123 | RTR, len 3
			"0300000000000000 80000020 08 03 0000 0000000400000000" + // 0x80 | ERR
			"0400000000000000 ff070000 00 ff 0000 0000000000000000", // 0x7FF, len 0, bus 255
		seq: 0x00ffffffffffffff,
		frames: []frame.Frame{
			mkFrame(1, 0x1A2B3C4D, frame.Extended, 1, 1, 2, 3, 4, 5, 6, 7, 8),
			{Time: 2, ID: 0x123, Flags: frame.Remote, Len: 3},
			mkFrame(3, 0x80, frame.Error, 3, 0, 0, 0, 4, 0, 0, 0, 0),
			mkFrame(4, 0x7FF, 0, 255),
		},
	},
	{
		name: "bytes past the data length are ignored",
		in: "01 00 0100 0000000000000000" +
			"0500000000000000 11000000 02 00 0000 aabbccddeeff0102",
		frames: []frame.Frame{mkFrame(5, 0x11, 0, 0, 0xaa, 0xbb)},
	},
	{
		name: "timestamp with the top bit set survives as a negative int64",
		in: "01 00 0100 0000000000000000" +
			"ffffffffffffffff 11000000 00 00 0000 0000000000000000",
		frames: []frame.Frame{mkFrame(-1, 0x11, 0, 0)},
	},
}

func TestParse(t *testing.T) {
	for _, tt := range parseTests {
		t.Run(tt.name, func(t *testing.T) {
			b, err := Parse(unhex(t, tt.in))
			if err != nil {
				t.Fatalf("Parse: got error %v, want nil", err)
			}
			if b.Seq() != tt.seq {
				t.Errorf("Seq: got %d, want %d", b.Seq(), tt.seq)
			}
			if b.Len() != len(tt.frames) {
				t.Fatalf("Len: got %d, want %d", b.Len(), len(tt.frames))
			}
			for i := range tt.frames {
				got := frame.Frame{Data: [64]byte{63: 0xff}} // stale bytes must be cleared
				b.Frame(i, &got)
				if got != tt.frames[i] {
					t.Errorf("frame %d: got %+v, want %+v", i, got, tt.frames[i])
				}
			}
		})
	}
}

func TestAppendBatchMatchesVectors(t *testing.T) {
	for _, tt := range parseTests {
		if strings.Contains(tt.name, "ignored") {
			continue // the encoder writes zeros past the data length
		}
		t.Run(tt.name, func(t *testing.T) {
			got, err := AppendBatch(nil, tt.seq, tt.frames)
			if err != nil {
				t.Fatalf("AppendBatch: got error %v, want nil", err)
			}
			if want := unhex(t, tt.in); !bytes.Equal(got, want) {
				t.Errorf("got\n%x\nwant\n%x", got, want)
			}
		})
	}
}

func TestParseErrors(t *testing.T) {
	okFrame := "0100000000000000 23010000 02 00 0000 0102000000000000"
	tests := []struct {
		name   string
		in     string
		err    error
		offset int
		frame  int
		text   string
	}{
		{"empty", "", ErrShort, 0, -1,
			"rawbatch: message shorter than the header: got 0, want at least 12 (byte 0)"},
		{"short header", "01 00 0000 00000000000000", ErrShort, 11, -1,
			"rawbatch: message shorter than the header: got 11, want at least 12 (byte 11)"},
		{"version 0", "00 00 0000 0000000000000000", ErrVersion, 0, -1,
			"rawbatch: unsupported version: got 0, want 1 (byte 0)"},
		{"version 2", "02 00 0000 0000000000000000", ErrVersion, 0, -1,
			"rawbatch: unsupported version: got 2, want 1 (byte 0)"},
		{"flags set", "01 80 0000 0000000000000000", ErrFlags, 1, -1,
			"rawbatch: reserved header flags set: got 128, want 0 (byte 1)"},
		{"count larger than the frames", "01 00 0200 0000000000000000" + okFrame, ErrLength, 2, -1,
			"rawbatch: message length does not match count: got 36, want 60 (byte 2)"},
		{"count smaller than the frames", "01 00 0000 0000000000000000" + okFrame, ErrLength, 2, -1,
			"rawbatch: message length does not match count: got 36, want 12 (byte 2)"},
		{"truncated frame", "01 00 0100 0000000000000000" + okFrame[:len(okFrame)-2], ErrLength, 2, -1,
			"rawbatch: message length does not match count: got 35, want 36 (byte 2)"},
		{"data length 9 in frame 1", "01 00 0200 0000000000000000" + okFrame +
			"0100000000000000 23010000 09 00 0000 0000000000000000", ErrDataLength, 48, 1,
			"rawbatch: data length over 8: got 9, want at most 8 (frame 1, byte 48)"},
		{"reserved set", "01 00 0100 0000000000000000" +
			"0100000000000000 23010000 00 00 0100 0000000000000000", ErrReserved, 26, 0,
			"rawbatch: reserved frame field set: got 1, want 0 (frame 0, byte 26)"},
		{"standard ID over 11 bits", "01 00 0100 0000000000000000" +
			"0100000000000000 00080000 00 00 0000 0000000000000000", ErrID, 20, 0,
			"rawbatch: ID wider than its format: got 2048, want at most 2047 (frame 0, byte 20)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse(unhex(t, tt.in))
			if !errors.Is(err, tt.err) {
				t.Fatalf("got error %v, want %v", err, tt.err)
			}
			var fe *FormatError
			if !errors.As(err, &fe) {
				t.Fatalf("got %T, want *FormatError", err)
			}
			if fe.Offset != tt.offset || fe.Frame != tt.frame {
				t.Errorf("got offset %d frame %d, want offset %d frame %d", fe.Offset, fe.Frame, tt.offset, tt.frame)
			}
			if err.Error() != tt.text {
				t.Errorf("got text %q, want %q", err.Error(), tt.text)
			}
		})
	}
}

func TestAppendBatchRejects(t *testing.T) {
	good := mkFrame(1, 0x100, 0, 0, 1)
	tests := []struct {
		name string
		f    frame.Frame
		err  error
		text string
	}{
		{"CAN FD", frame.Frame{ID: 1, Flags: frame.FD, Len: 2}, ErrFD,
			"rawbatch: CAN FD frame not representable (frame 1, byte 36)"},
		{"data length 9", frame.Frame{ID: 1, Len: 9}, ErrDataLength,
			"rawbatch: data length over 8: got 9, want at most 8 (frame 1, byte 48)"},
		{"standard ID over 11 bits", frame.Frame{ID: 0x800}, ErrID,
			"rawbatch: ID wider than its format: got 2048, want at most 2047 (frame 1, byte 44)"},
		{"ID over 29 bits", frame.Frame{ID: 1 << 29, Flags: frame.Extended}, ErrID,
			"rawbatch: ID wider than its format: got 536870912, want at most 536870911 (frame 1, byte 44)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dst := []byte("keep")
			got, err := AppendBatch(dst, 0, []frame.Frame{good, tt.f})
			if !errors.Is(err, tt.err) {
				t.Fatalf("got error %v, want %v", err, tt.err)
			}
			if err.Error() != tt.text {
				t.Errorf("got text %q, want %q", err.Error(), tt.text)
			}
			if string(got) != "keep" {
				t.Errorf("got dst %q, want it unchanged", got)
			}
			var e Encoder
			if err := e.Add(&good); err != nil {
				t.Fatal(err)
			}
			if err := e.Add(&tt.f); !errors.Is(err, tt.err) || err.Error() != tt.text {
				t.Errorf("Encoder.Add: got %v, want %q", err, tt.text)
			}
			if e.Len() != 1 {
				t.Errorf("Encoder.Len after a rejected frame: got %d, want 1", e.Len())
			}
		})
	}
}

func TestAppendBatchTooMany(t *testing.T) {
	frames := make([]frame.Frame, MaxCount+1)
	if _, err := AppendBatch(nil, 0, frames); !errors.Is(err, ErrTooMany) {
		t.Errorf("got %v, want ErrTooMany", err)
	}
	b, err := AppendBatch(nil, 0, frames[:MaxCount])
	if err != nil {
		t.Fatalf("got %v for %d frames, want nil", err, MaxCount)
	}
	if got, want := len(b), HeaderSize+FrameSize*MaxCount; got != want {
		t.Errorf("got %d bytes, want %d", got, want)
	}
}

func TestEncoder(t *testing.T) {
	var e Encoder
	e.Reset(100)
	in := []frame.Frame{
		mkFrame(10, 0x123, 0, 0, 1, 2, 3),
		mkFrame(11, 0x1ABCDEF, frame.Extended, 1, 4),
		mkFrame(12, 0x7, frame.Remote, 2),
	}
	for i := range in[:2] {
		if err := e.Add(&in[i]); err != nil {
			t.Fatal(err)
		}
	}
	if got := e.Seq(); got != 100 {
		t.Errorf("Seq before flush: got %d, want 100", got)
	}
	first := e.Flush(nil)
	if got := e.Seq(); got != 102 {
		t.Errorf("Seq after flushing 2 frames: got %d, want 102", got)
	}
	if got := e.Flush(nil); got != nil {
		t.Errorf("Flush with nothing pending: got %x, want nil", got)
	}
	if err := e.Add(&in[2]); err != nil {
		t.Fatal(err)
	}
	second := e.Flush(nil)

	want1, _ := AppendBatch(nil, 100, in[:2])
	want2, _ := AppendBatch(nil, 102, in[2:])
	if !bytes.Equal(first, want1) {
		t.Errorf("first batch: got %x, want %x", first, want1)
	}
	if !bytes.Equal(second, want2) {
		t.Errorf("second batch: got %x, want %x", second, want2)
	}
}

// sample returns n varied valid frames.
func sample(n int) []frame.Frame {
	fs := make([]frame.Frame, n)
	for i := range fs {
		f := &fs[i]
		f.Time = 1_700_000_000_000_000_000 + int64(i)*1000
		f.ID = uint32(0x100 + i%0x600)
		f.Bus = uint8(i % 2)
		f.Len = uint8(i % 9)
		if i%7 == 0 {
			f.ID, f.Flags = 0x18FF0000+uint32(i), frame.Extended
		}
		for j := range f.Len {
			f.Data[j] = byte(i + int(j))
		}
	}
	return fs
}

func TestRoundTrip(t *testing.T) {
	in := sample(100)
	b, err := AppendBatch(nil, 1234, in)
	if err != nil {
		t.Fatal(err)
	}
	batch, err := Parse(b)
	if err != nil {
		t.Fatal(err)
	}
	if batch.Seq() != 1234 || batch.Len() != len(in) {
		t.Fatalf("got seq %d len %d, want 1234 and %d", batch.Seq(), batch.Len(), len(in))
	}
	var f frame.Frame
	for i := range in {
		batch.Frame(i, &f)
		if f != in[i] {
			t.Errorf("frame %d: got %+v, want %+v", i, f, in[i])
		}
	}
}

func TestAllocs(t *testing.T) {
	in := sample(64)
	buf := make([]byte, 0, HeaderSize+FrameSize*len(in))
	msg, _ := AppendBatch(nil, 0, in)
	var f frame.Frame
	var e Encoder
	for i := range in { // grow the encoder's buffer once
		_ = e.Add(&in[i])
	}
	e.Flush(buf)

	tests := []struct {
		name string
		fn   func()
	}{
		{"AppendBatch", func() { buf, _ = AppendBatch(buf[:0], 1, in) }},
		{"Encoder", func() {
			for i := range in {
				_ = e.Add(&in[i])
			}
			buf = e.Flush(buf[:0])
		}},
		{"Parse and read every frame", func() {
			b, _ := Parse(msg)
			for i := range b.Len() {
				b.Frame(i, &f)
			}
		}},
	}
	for _, tt := range tests {
		if got := testing.AllocsPerRun(100, tt.fn); got != 0 {
			t.Errorf("%s: got %v allocs per run, want 0", tt.name, got)
		}
	}
}

func BenchmarkParse(b *testing.B) {
	msg, _ := AppendBatch(nil, 0, sample(100)) // about one 10 ms batch at a full bus
	var f frame.Frame
	b.ReportAllocs()
	b.SetBytes(int64(len(msg)))
	for b.Loop() {
		batch, err := Parse(msg)
		if err != nil {
			b.Fatal(err)
		}
		for i := range batch.Len() {
			batch.Frame(i, &f)
		}
	}
}

func BenchmarkAppendBatch(b *testing.B) {
	in := sample(100)
	buf := make([]byte, 0, HeaderSize+FrameSize*len(in))
	b.ReportAllocs()
	b.SetBytes(int64(cap(buf)))
	for b.Loop() {
		buf, _ = AppendBatch(buf[:0], 0, in)
	}
}

func FuzzParse(f *testing.F) {
	for _, tt := range parseTests {
		f.Add(unhex(f, tt.in))
	}
	seed, _ := AppendBatch(nil, 99, sample(5))
	f.Add(seed)
	f.Add([]byte{1, 0, 1, 0})
	f.Fuzz(func(t *testing.T, in []byte) {
		b, err := Parse(in)
		if err != nil {
			var fe *FormatError
			if !errors.As(err, &fe) {
				t.Fatalf("got %T error, want *FormatError", err)
			}
			return
		}
		if got, want := len(in), HeaderSize+FrameSize*b.Len(); got != want {
			t.Fatalf("accepted %d bytes for %d frames, want %d", got, b.Len(), want)
		}
		frames := make([]frame.Frame, b.Len())
		for i := range frames {
			b.Frame(i, &frames[i])
		}
		out, err := AppendBatch(nil, b.Seq(), frames)
		if err != nil {
			t.Fatalf("re-encode of an accepted batch: %v", err)
		}
		b2, err := Parse(out)
		if err != nil {
			t.Fatalf("re-parse: %v", err)
		}
		if b2.Seq() != b.Seq() || b2.Len() != b.Len() {
			t.Fatalf("re-parse: got seq %d len %d, want %d %d", b2.Seq(), b2.Len(), b.Seq(), b.Len())
		}
		var g frame.Frame
		for i := range frames {
			b2.Frame(i, &g)
			if g != frames[i] {
				t.Fatalf("frame %d: got %+v, want %+v", i, g, frames[i])
			}
		}
		// The encoder writes zeros past the data length; otherwise the
		// bytes are those it was given.
		for i := range frames {
			p := in[HeaderSize+i*FrameSize:]
			q := out[HeaderSize+i*FrameSize:]
			n := offData + int(frames[i].Len)
			if !bytes.Equal(p[:n], q[:n]) {
				t.Fatalf("frame %d: re-encoded %x, want %x", i, q[:n], p[:n])
			}
		}
		if binary.LittleEndian.Uint64(out[offSeq:]) != b.Seq() {
			t.Fatalf("re-encoded seq differs")
		}
	})
}
