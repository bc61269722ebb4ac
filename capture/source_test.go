package capture

import (
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/yukart/candec/frame"
)

// readAll reads src to its end and returns the IDs of its frames, or the
// first error that is not io.EOF.
func readAll(src Source) ([]uint32, error) {
	var ids []uint32
	var f frame.Frame
	for {
		err := src.Next(&f)
		if err == io.EOF {
			return ids, nil
		}
		if err != nil {
			return ids, err
		}
		ids = append(ids, f.ID)
	}
}

func TestNewSourceDetect(t *testing.T) {
	tests := []struct {
		name string
		in   string
		ids  []uint32 // frames, when the format is known
		err  string   // in the ErrFormat message, when it is not
	}{
		{name: "candump", in: "(1696868256.123456) can0 123#DEADBEEF\n(1696868256.123789) can1 124#01\n", ids: []uint32{0x123, 0x124}},
		{name: "no final line ending", in: "(1.0) can0 123#01", ids: []uint32{0x123}},
		{name: "leading blank lines", in: "\n  \n\t\n(1.0) can0 123#01\n", ids: []uint32{0x123}},
		{name: "CRLF", in: "\r\n(1.0) can0 123#01\r\n(2.0) can0 124#02\r\n", ids: []uint32{0x123, 0x124}},
		{name: "zero-padded seconds", in: "(0000000001.000000) can0 123#01\n", ids: []uint32{0x123}},
		{name: "empty", in: "", ids: nil},
		{name: "blank lines only", in: "\n\n \r\n", ids: nil},
		// The Reader takes no comments, so neither does detection.
		{name: "leading comment", in: "# candump\n(1.0) can0 123#01\n", err: `its first line is "# candump"`},
		{name: "candump screen format", in: "  can0  123   [4]  DE AD BE EF\n", err: `its first line is "  can0  123   [4]  DE AD BE EF"`},
		{name: "garbage", in: "hello world\n", err: `its first line is "hello world"`},
		{name: "garbage without line ending", in: "hello", err: `its first line is "hello"`},
		{name: "no digit after (", in: "(x) can0 123#01\n", err: `its first line is "(x) can0 123#01"`},
		{name: "long line", in: strings.Repeat("x", 100) + "\n", err: `its first line begins "` + strings.Repeat("x", 60) + `"`},
		{name: "binary", in: "LOGX\x90\x00\x00\x00\x01\x02", err: "it begins with binary data 4c 4f 47 58 90 00 00 00 01 02"},
		{name: "NUL bytes", in: "\x00\x00\x00\x00", err: "it begins with binary data 00 00 00 00"},
		{name: "blank head", in: strings.Repeat("\n", sniffLen) + "(1.0) can0 123#01\n", err: "only blank lines in its first 4096 bytes"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			src, err := NewSource(strings.NewReader(tt.in), Options{})
			if tt.err != "" {
				if !errors.Is(err, ErrFormat) || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("got %v, want ErrFormat saying %s", err, tt.err)
				}
				if !strings.Contains(err.Error(), "candump") {
					t.Errorf("got %q, want it to name the known formats", err)
				}
				return
			}
			if err != nil {
				t.Fatalf("got %v, want a source", err)
			}
			ids, err := readAll(src)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(ids, tt.ids) {
				t.Errorf("got IDs %x, want %x", ids, tt.ids)
			}
		})
	}
}

// TestNewSourceLineError: a capture that starts as a candump log but has
// a malformed line is the Reader's to report, with its line number.
func TestNewSourceLineError(t *testing.T) {
	src, err := NewSource(strings.NewReader("\n(1.0) can0 12#01\n"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	var le *LineError
	if _, err := readAll(src); !errors.As(err, &le) || le.Line != 2 {
		t.Errorf("got %v, want a *LineError on line 2", err)
	}
}

// TestNewSourceLongCapture: a capture longer than the sniffed head and
// than the Reader's buffer reads whole.
func TestNewSourceLongCapture(t *testing.T) {
	data := generated(5000)
	src, err := NewSource(bytes.NewReader(data), Options{})
	if err != nil {
		t.Fatal(err)
	}
	r := NewReader(bytes.NewReader(data), Options{})
	var got, want frame.Frame
	for i := 0; ; i++ {
		gerr, werr := src.Next(&got), r.Next(&want)
		if gerr != werr || got != want {
			t.Fatalf("frame %d: got %+v, %v, want %+v, %v", i, got, gerr, want, werr)
		}
		if gerr == io.EOF {
			break
		}
	}
}

func TestNewSourceReadError(t *testing.T) {
	boom := errors.New("boom")
	_, err := NewSource(&failing{err: boom}, Options{})
	if !errors.Is(err, boom) || !strings.HasPrefix(err.Error(), "capture: read: ") {
		t.Errorf("got %v, want capture: read: boom", err)
	}
}

type failing struct{ err error }

func (f *failing) Read([]byte) (int, error) { return 0, f.err }

// TestNewSourcePipe: on a pipe whose writer has given one line and waits,
// NewSource and the first Next return without waiting for more. A hang
// fails the test.
func TestNewSourcePipe(t *testing.T) {
	tests := []struct {
		name   string
		writes []string
		id     uint32 // of the first frame; 0 for ErrFormat
	}{
		{name: "one line", writes: []string{"(1.0) can0 123#01\n"}, id: 0x123},
		{name: "line in pieces", writes: []string{"\n", "(", "1.0) can0 124#01\n"}, id: 0x124},
		{name: "unknown line in pieces", writes: []string{"hel", "lo\n"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pr, pw, err := os.Pipe()
			if err != nil {
				t.Fatal(err)
			}
			defer pr.Close()
			defer pw.Close()
			type result struct {
				f   frame.Frame
				err error
			}
			done := make(chan result, 1)
			go func() {
				src, err := NewSource(pr, Options{})
				if err != nil {
					done <- result{err: err}
					return
				}
				var f frame.Frame
				err = src.Next(&f)
				done <- result{f, err}
			}()
			for _, w := range tt.writes {
				time.Sleep(10 * time.Millisecond) // let the reader see each piece alone
				if _, err := pw.WriteString(w); err != nil {
					t.Fatal(err)
				}
			}
			select {
			case res := <-done:
				switch {
				case tt.id == 0 && !errors.Is(res.err, ErrFormat):
					t.Errorf("got %v, want ErrFormat", res.err)
				case tt.id != 0 && (res.err != nil || res.f.ID != tt.id):
					t.Errorf("got frame %+v, %v, want ID %X", res.f, res.err, tt.id)
				}
			case <-time.After(10 * time.Second):
				t.Fatal("NewSource or Next waits for more than the pipe has given")
			}
		})
	}
}

// TestNewSourceAllocs: reading through NewSource allocates nothing per
// frame, as the Reader does.
func TestNewSourceAllocs(t *testing.T) {
	src, err := NewSource(&cycle{data: generated(1000)}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	var f frame.Frame
	for range 2000 { // learn the interfaces, fill the buffer
		if err := src.Next(&f); err != nil {
			t.Fatal(err)
		}
	}
	if got := testing.AllocsPerRun(10000, func() { _ = src.Next(&f) }); got != 0 {
		t.Errorf("got %v allocs per frame, want 0", got)
	}
}

func TestOpen(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "c.log")
	text := "(1.0) can0 123#01\n(2.0) can0 124#02\n"
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	c, err := Open(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if c.Format() != "candump" || c.Size() != int64(len(text)) || c.Name() != path {
		t.Errorf("got format %q, size %d, name %q, want candump, %d, %q", c.Format(), c.Size(), c.Name(), len(text), path)
	}
	if ids, err := readAll(c); err != nil || len(ids) != 2 {
		t.Errorf("got IDs %x, %v, want 2 frames", ids, err)
	}
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	if err := c.Close(); err == nil {
		t.Error("second Close succeeded: the first did not close the file")
	}
}

func TestOpenErrors(t *testing.T) {
	dir := t.TempDir()
	missing := filepath.Join(dir, "none.log")
	if _, err := Open(missing, Options{}); !errors.Is(err, os.ErrNotExist) || !strings.Contains(err.Error(), missing) {
		t.Errorf("missing file: got %v, want the os error naming %s", err, missing)
	}
	if _, err := Open(dir, Options{}); err == nil || err.Error() != "capture: "+dir+" is a directory, not a capture" {
		t.Errorf("directory: got %v, want it refused as a directory", err)
	}
	bad := filepath.Join(dir, "bad.log")
	if err := os.WriteFile(bad, []byte("hello\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Open(bad, Options{}); !errors.Is(err, ErrFormat) || !strings.HasPrefix(err.Error(), bad+": ") {
		t.Errorf("unknown content: got %v, want ErrFormat naming %s", err, bad)
	}
}

// TestOpenStdin: "-" reads Options.Stdin and leaves it open.
func TestOpenStdin(t *testing.T) {
	pr, pw, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer pr.Close()
	go func() {
		pw.WriteString("(1.0) can0 123#01\n")
		pw.Close()
	}()
	c, err := Open("-", Options{Stdin: pr})
	if err != nil {
		t.Fatal(err)
	}
	if ids, err := readAll(c); err != nil || len(ids) != 1 || ids[0] != 0x123 {
		t.Errorf("got IDs %x, %v, want [123]", ids, err)
	}
	if c.Size() != 0 || c.Name() != "-" {
		t.Errorf("got size %d, name %q, want 0 (a pipe) and -", c.Size(), c.Name())
	}
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := pr.Read(make([]byte, 1)); err != io.EOF {
		t.Errorf("reading stdin after Close: got %v, want io.EOF (still open)", err)
	}

	// Standard input redirected from a file has its size, and from a
	// directory is refused.
	path := filepath.Join(t.TempDir(), "c.log")
	if err := os.WriteFile(path, []byte("(1.0) can0 123#01\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if c, err := Open("-", Options{Stdin: f}); err != nil || c.Size() != 18 {
		t.Errorf("stdin from a file: got %v, want size 18 (err %v)", c, err)
	}
	d, err := os.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	if _, err := Open("-", Options{Stdin: d}); err == nil || err.Error() != "capture: stdin is a directory, not a capture" {
		t.Errorf("stdin from a directory: got %v, want it refused", err)
	}
	// An injected reader that is not a file is read as it is.
	if c, err := Open("-", Options{Stdin: strings.NewReader("")}); err != nil {
		t.Errorf("empty stdin: got %v, want an empty capture", err)
	} else if ids, err := readAll(c); err != nil || len(ids) != 0 {
		t.Errorf("empty stdin: got IDs %x, %v, want none", ids, err)
	}
}

// TestGzipErrorPosition: a gzip capture cut short, or with a broken
// compressed stream, is reported with the line reached and the byte of
// the compressed file where decompression stopped.
func TestGzipErrorPosition(t *testing.T) {
	var text strings.Builder
	for i := range 2000 {
		fmt.Fprintf(&text, "(%d.000000) can0 123#%016X\n", 1000+i, i*7919)
	}
	var z bytes.Buffer
	zw := gzip.NewWriter(&z)
	zw.Write([]byte(text.String()))
	zw.Close()
	full := z.Bytes()

	cut := full[:len(full)/2]
	_, err := readAll(mustSource(t, cut))
	want := fmt.Sprintf("read: gzip: compressed byte %d, after ", len(cut))
	if err == nil || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), "capture: line ") || !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Errorf("cut: got %v, want the line and %q", err, want)
	}

	// A broken stored-block header: the deflate data is invalid at once.
	bad := slices.Clone(full)
	bad[10] = 0xff // the first byte after the 10-byte header
	_, err = readAll(mustSource(t, bad))
	if err == nil || !strings.Contains(err.Error(), "gzip: compressed byte ") {
		t.Errorf("corrupt: got %v, want the compressed byte", err)
	}
}

func mustSource(t *testing.T, b []byte) Source {
	t.Helper()
	src, err := NewSource(bytes.NewReader(b), Options{})
	if err != nil {
		// A stream broken in its first block fails already here.
		return errSource{err}
	}
	return src
}

type errSource struct{ err error }

func (e errSource) Next(*frame.Frame) error { return e.err }
func (errSource) Interface(uint8) string    { return "" }
func (errSource) Skipped() int              { return 0 }
