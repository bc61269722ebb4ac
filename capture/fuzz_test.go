package capture

import (
	"bytes"
	"errors"
	"io"
	"testing"

	"github.com/yukart/candec/frame"
)

// FuzzReadLine feeds arbitrary input to a Reader. It must not panic or
// hang; every error is a *LineError; and the frames it accepts, written
// back, read as the same frames on the same interfaces.
func FuzzReadLine(f *testing.F) {
	for _, s := range []string{
		"(1696868256.123456) can0 123#DEADBEEF",
		"(1.000000) can1 1A2B3C4D#0102030405060708 T",
		"(1.0) can0 123#R5\n(2.0) vcan1 123##1AABB",
		"(1.0) can0 20000080#0000000400000000",
		"(1.0) can0 123#0102030405060708_A",
		"(1.0) x 123#R8_F R\r\n",
		"(1.0) can0 123#01.02",
		"(46408.584930) can128 2E4#BE000000A9",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		r := NewReader(bytes.NewReader(in), Options{SkipInvalid: true})
		var frames []frame.Frame
		var names []string
		var fr frame.Frame
		for {
			err := r.Next(&fr)
			if err == io.EOF {
				break
			}
			if err != nil {
				t.Fatalf("with SkipInvalid: got %v, want only frames and io.EOF", err)
			}
			frames = append(frames, fr)
			names = append(names, r.Interface(fr.Bus))
		}
		strict := NewReader(bytes.NewReader(in), Options{})
		for {
			err := strict.Next(&fr)
			if err == io.EOF {
				break
			}
			var le *LineError
			if err != nil && !errors.As(err, &le) {
				t.Fatalf("got %T %v, want a *LineError", err, err)
			}
		}

		var out bytes.Buffer
		w := NewWriter(&out)
		for i := range frames {
			if err := w.Write(&frames[i], names[i]); err != nil {
				t.Fatalf("writing accepted frame %+v on %q: %v", frames[i], names[i], err)
			}
		}
		if err := w.Flush(); err != nil {
			t.Fatal(err)
		}
		r2 := NewReader(&out, Options{})
		for i := range frames {
			if err := r2.Next(&fr); err != nil {
				t.Fatalf("re-reading frame %d: %v", i, err)
			}
			if fr != frames[i] || r2.Interface(fr.Bus) != names[i] {
				t.Fatalf("frame %d: got %+v on %q, want %+v on %q", i, fr, r2.Interface(fr.Bus), frames[i], names[i])
			}
		}
		if err := r2.Next(&fr); err != io.EOF {
			t.Fatalf("after the frames: got %v, want io.EOF", err)
		}
	})
}

// FuzzNewSource feeds arbitrary input to NewSource. It must not panic or
// hang; it refuses only with ErrFormat; it never refuses a capture whose
// first line the Reader takes; and the Source it returns reads what a
// Reader reads.
func FuzzNewSource(f *testing.F) {
	for _, s := range []string{
		"",
		"\n\r\n",
		"(1696868256.123456) can0 123#DEADBEEF\n",
		"\n(1.0) can0 123#01\r\n(2.0) can1 124#R",
		"(1.0) can0 12#00\n",
		"# comment\n(1.0) can0 123#01\n",
		"LOGG\x00\x00\x00\x01",
		"(",
		"(9",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		src, err := NewSource(bytes.NewReader(in), Options{})
		r := NewReader(bytes.NewReader(in), Options{})
		var want frame.Frame
		werr := r.Next(&want)
		if err != nil {
			if !errors.Is(err, ErrFormat) {
				t.Fatalf("got %v, want ErrFormat or a source", err)
			}
			if werr == nil {
				t.Fatalf("refused a capture whose first line the Reader takes: %+v", want)
			}
			return
		}
		var got frame.Frame
		for i := 0; ; i++ {
			gerr := src.Next(&got)
			if (gerr == nil) != (werr == nil) || gerr != nil && gerr.Error() != werr.Error() || got != want {
				t.Fatalf("frame %d: got %+v, %v, want %+v, %v", i, got, gerr, want, werr)
			}
			if gerr == io.EOF || i > len(in) {
				return
			}
			werr = r.Next(&want)
		}
	})
}
