package capture

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/yukart/candec/frame"
	"github.com/yukart/candec/internal/testkit/realdata"
)

func TestAppendLine(t *testing.T) {
	tests := []struct {
		name  string
		f     frame.Frame
		iface string
		want  string
	}{
		{"11-bit", mk(1696868256123456000, 0x123, 0, 0, 0xDE, 0xAD, 0xBE, 0xEF), "can0",
			"(1696868256.123456) can0 123#DEADBEEF\n"},
		{"11-bit small ID, no data", mk(46408584930000, 0x24, 0, 0), "can1",
			"(46408.584930) can1 024#\n"},
		{"29-bit", mk(1e9, 0x1A2B3C4D, frame.Extended, 0, 1, 2, 3, 4, 5, 6, 7, 8), "can0",
			"(1.000000) can0 1A2B3C4D#0102030405060708\n"},
		{"29-bit small ID", mk(1e9, 0x123, frame.Extended, 0), "can0",
			"(1.000000) can0 00000123#\n"},
		{"remote", mk(1e9, 0x123, frame.Remote, 0), "can0", "(1.000000) can0 123#R\n"},
		{"remote with length, data ignored", frame.Frame{Time: 1e9, ID: 0x123, Flags: frame.Remote, Len: 8, Data: [64]byte{1}},
			"can0", "(1.000000) can0 123#R8\n"},
		{"CAN FD", mk(1e9, 0x123, frame.FD, 0, seq(12)...), "can0",
			"(1.000000) can0 123##0000102030405060708090A0B\n"},
		{"CAN FD with BRS and ESI", mk(1e9, 0x123, frame.FD|frame.BRS|frame.ESI, 0, 1), "can0",
			"(1.000000) can0 123##301\n"},
		{"error frame", mk(1e9, 0x80, frame.Error, 0, 0, 0, 0, 4, 0, 0, 0, 0), "can0",
			"(1.000000) can0 20000080#0000000400000000\n"},
		{"error frame, extended flag ignored", mk(1e9, 0x4, frame.Error|frame.Extended, 0), "can0",
			"(1.000000) can0 20000004#\n"},
		{"sub-microsecond time", mk(1696868256123456789, 0x123, 0, 0), "can0",
			"(1696868256.123456789) can0 123#\n"},
		{"zero time", mk(0, 0x123, 0, 0), "vcan0", "(0.000000) vcan0 123#\n"},
		{"bus ignored", mk(1e9, 0x123, 0, 7), "can0", "(1.000000) can0 123#\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := AppendLine([]byte("x"), &tt.f, tt.iface)
			if err != nil {
				t.Fatalf("got error %v, want nil", err)
			}
			if string(got) != "x"+tt.want {
				t.Errorf("got %q, want %q", got, "x"+tt.want)
			}
		})
	}
}

func TestAppendLineErrors(t *testing.T) {
	tests := []struct {
		name  string
		f     frame.Frame
		iface string
		err   error
		text  string
	}{
		{"negative time", mk(-1, 1, 0, 0), "can0", ErrTime, "capture: timestamp before 1970: -1 ns"},
		{"empty interface", mk(0, 1, 0, 0), "", ErrInterface, `capture: invalid interface name: ""`},
		{"interface with a space", mk(0, 1, 0, 0), "can 0", ErrInterface, `capture: invalid interface name: "can 0"`},
		{"interface with a newline", mk(0, 1, 0, 0), "can0\n", ErrInterface, `capture: invalid interface name: "can0\n"`},
		{"interface too long", mk(0, 1, 0, 0), strings.Repeat("c", 65), ErrInterface,
			`capture: invalid interface name: "` + strings.Repeat("c", 65) + `"`},
		{"classic length 9", frame.Frame{ID: 1, Len: 9}, "can0", ErrLength,
			"capture: data length out of range: 9 bytes, want at most 8"},
		{"FD length 65", frame.Frame{ID: 1, Len: 65, Flags: frame.FD}, "can0", ErrLength,
			"capture: data length out of range: 65 bytes, want at most 64"},
		{"11-bit ID 800", frame.Frame{ID: 0x800}, "can0", ErrID, "capture: ID wider than its format: 800, want at most 7FF"},
		{"29-bit ID over", frame.Frame{ID: 1 << 29, Flags: frame.Extended}, "can0", ErrID,
			"capture: ID wider than its format: 20000000, want at most 1FFFFFFF"},
		{"remote FD", frame.Frame{ID: 1, Flags: frame.FD | frame.Remote}, "can0", ErrFlags, "capture: remote CAN FD frame"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := AppendLine([]byte("x"), &tt.f, tt.iface)
			if !errors.Is(err, tt.err) || err.Error() != tt.text {
				t.Errorf("got error %v, want %q", err, tt.text)
			}
			if string(got) != "x" {
				t.Errorf("got dst %q, want it unchanged", got)
			}
		})
	}
}

// TestRoundTrip writes varied frames, reads them back and writes them
// again.
func TestRoundTrip(t *testing.T) {
	var in []frame.Frame
	names := []string{"can0", "can1", "vcan5", "slcan0"}
	for i := range 500 {
		f := mk(1696868256000000000+int64(i)*7777, uint32(i%0x800), 0, 0, seq(i%9)...)
		switch i % 7 {
		case 1:
			f.ID, f.Flags = uint32(i)*104729%(1<<29), frame.Extended
		case 2:
			f.Flags, f.Data = frame.Remote, [64]byte{}
		case 3:
			f.Flags, f.Len, f.Data = frame.FD, uint8(i%65), [64]byte{}
			copy(f.Data[:], bytes.Repeat([]byte{byte(i)}, int(f.Len)))
		case 4:
			f.ID, f.Flags = uint32(i)<<12, frame.Error
		}
		in = append(in, f)
	}
	var buf bytes.Buffer
	w := NewWriter(&buf)
	for i := range in {
		if err := w.Write(&in[i], names[i%len(names)]); err != nil {
			t.Fatalf("frame %d: %v", i, err)
		}
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	first := bytes.Clone(buf.Bytes())

	r := NewReader(bytes.NewReader(first), Options{})
	buf.Reset()
	w = NewWriter(&buf)
	var f frame.Frame
	for i := range in {
		if err := r.Next(&f); err != nil {
			t.Fatalf("frame %d: %v", i, err)
		}
		want := in[i]
		want.Bus = f.Bus
		if f != want {
			t.Errorf("frame %d: got %+v, want %+v", i, f, want)
		}
		if got := r.Interface(f.Bus); got != names[i%len(names)] {
			t.Errorf("frame %d: got interface %q, want %q", i, got, names[i%len(names)])
		}
		if err := w.Write(&f, r.Interface(f.Bus)); err != nil {
			t.Fatal(err)
		}
	}
	if err := r.Next(&f); err != io.EOF {
		t.Errorf("at the end: got %v, want io.EOF", err)
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(buf.Bytes(), first) {
		t.Error("writing the frames read back differs from the first writing")
	}
}

func rav4(t testing.TB) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(realdata.Dir(t), "logs", "rav4_2017_highway_1min.log"))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestRAV4 reads the real vehicle log, every line of it, and writes it
// back byte for byte.
func TestRAV4(t *testing.T) {
	log := rav4(t)
	r := NewReader(bytes.NewReader(log), Options{})
	var out bytes.Buffer
	w := NewWriter(&out)
	var f frame.Frame
	perBus := map[uint8]int{}
	for {
		err := r.Next(&f)
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		perBus[f.Bus]++
		if err := w.Write(&f, r.Interface(f.Bus)); err != nil {
			t.Fatalf("line %d: %v", r.Line(), err)
		}
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	if got, want := r.Line(), bytes.Count(log, []byte{'\n'}); got != want {
		t.Errorf("lines: got %d, want %d", got, want)
	}
	for bus, name := range map[uint8]string{0: "can0", 1: "can1", 128: "can128", 129: "can129"} {
		if r.Interface(bus) != name || perBus[bus] == 0 {
			t.Errorf("bus %d: got interface %q with %d frames, want %q with some", bus, r.Interface(bus), perBus[bus], name)
		}
	}
	if len(perBus) != 4 {
		t.Errorf("got %d buses, want 4", len(perBus))
	}
	if !bytes.Equal(out.Bytes(), log) {
		a, b := out.Bytes(), log
		i := 0
		for i < len(a) && i < len(b) && a[i] == b[i] {
			i++
		}
		t.Errorf("rewritten log differs at byte %d: got %q, want %q", i, a[i:min(i+60, len(a))], b[i:min(i+60, len(b))])
	}
}

func TestWriterAllocs(t *testing.T) {
	w := NewWriter(io.Discard)
	f := mk(1696868256123456000, 0x1A2B3C4D, frame.Extended, 0, 1, 2, 3, 4, 5, 6, 7, 8)
	if got := testing.AllocsPerRun(1000, func() { _ = w.Write(&f, "can0") }); got != 0 {
		t.Errorf("got %v allocs per line, want 0", got)
	}
}

func BenchmarkReadRAV4(b *testing.B) {
	benchmarkRead(b, rav4(b))
}

func BenchmarkWrite(b *testing.B) {
	w := NewWriter(io.Discard)
	f := mk(1696868256123456000, 0x123, 0, 0, 1, 2, 3, 4, 5, 6, 7, 8)
	b.ReportAllocs()
	for b.Loop() {
		if err := w.Write(&f, "can0"); err != nil {
			b.Fatal(err)
		}
	}
}
