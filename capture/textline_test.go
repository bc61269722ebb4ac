package capture

import (
	"bytes"
	"errors"
	"fmt"
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

// render reads src to its end: one string a frame, its candump line, or
// "(SECONDS) IFACE ERROR" for an error frame, and the error that ended
// the reading (nil for io.EOF).
func render(src Source) ([]string, error) {
	var out []string
	var f frame.Frame
	for {
		err := src.Next(&f)
		if err == io.EOF {
			return out, nil
		}
		if err != nil {
			return out, err
		}
		if f.Flags&frame.Error != 0 {
			out = append(out, fmt.Sprintf("(%d.%09d) %s ERROR", f.Time/1e9, f.Time%1e9, src.Interface(f.Bus)))
			continue
		}
		out = append(out, show(&f, src.Interface(f.Bus)))
	}
}

// textCase is an input of a text reader and what it must give.
type textCase struct {
	name string
	in   string
	want []string // render's lines
	err  string   // the *LineError after them, as "line N: column C: …" (a prefix), or ""
}

func runTextCases(t *testing.T, open func(io.Reader, Options) Source, cases []textCase) {
	t.Helper()
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := render(open(strings.NewReader(c.in), Options{}))
			if strings.Join(got, "\n") != strings.Join(c.want, "\n") {
				t.Errorf("got frames\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(c.want, "\n"))
			}
			switch {
			case c.err == "" && err != nil:
				t.Errorf("got error %v, want none", err)
			case c.err != "":
				var le *LineError
				if !errors.As(err, &le) {
					t.Fatalf("got error %v, want a *LineError %q", err, c.err)
				}
				if got := fmt.Sprintf("line %d: %s", le.Line, le.Msg); !strings.HasPrefix(got, c.err) {
					t.Errorf("got error %q, want %q…", got, c.err)
				}
			}
		})
	}
}

// TestTextFormatsFolder reads every ASC and TRC capture of the formats
// folder (but the gzip ones) and compares it with its expected frames.
func TestTextFormatsFolder(t *testing.T) {
	dir := formatsDir(t)
	seen := map[string]int{}
	for _, r := range formatIndex(t, dir) {
		var open func(io.Reader, Options) Source
		tol := time.Microsecond
		switch {
		case strings.HasSuffix(r.file, ".gz"):
			continue
		case r.format == "Vector ASC":
			open = func(rd io.Reader, o Options) Source { return NewASCReader(rd, o) }
		case r.format == "PEAK TRC":
			// $STARTTIME has about 9 µs of resolution; the README allows
			// 5 µs between two exact-enough conversions.
			open = func(rd io.Reader, o Options) Source { return NewTRCReader(rd, o) }
			tol = 5 * time.Microsecond
		default:
			continue
		}
		seen[r.format]++
		t.Run(r.file, func(t *testing.T) {
			got, err := os.Open(filepath.Join(dir, r.file))
			if err != nil {
				t.Fatal(err)
			}
			defer got.Close()
			want, err := os.Open(filepath.Join(dir, r.expected))
			if err != nil {
				t.Fatal(err)
			}
			defer want.Close()
			src := open(got, Options{})
			n, e := compareFrames(t, r.file, src, want, tol)
			if n != r.frames || e != r.errorFrames {
				t.Errorf("got %d frames and %d error frames, INDEX.tsv says %d and %d", n, e, r.frames, r.errorFrames)
			}
			if src.Skipped() != 0 {
				t.Errorf("got %d skipped, want 0", src.Skipped())
			}
		})
	}
	if seen["Vector ASC"] < 12 || seen["PEAK TRC"] < 8 {
		t.Errorf("compared %v, want 12 ASC and 8 TRC captures", seen)
	}
}

// TestDetectText runs both detectors on the start of every file of the
// formats folder: each takes its own format's files and no other (BLF,
// MF4, the candump logs).
func TestDetectText(t *testing.T) {
	dir := formatsDir(t)
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, e := range ents {
		name := e.Name()
		if strings.HasSuffix(name, ".gz") || strings.HasSuffix(name, ".md") || strings.HasSuffix(name, ".tsv") {
			continue
		}
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		if len(b) > 4096 {
			b = b[:4096]
		}
		wantASC := strings.HasSuffix(name, ".asc")
		wantTRC := strings.HasSuffix(name, ".trc")
		if got := detectASC(b); got != wantASC {
			t.Errorf("%s: detectASC got %v, want %v", name, got, wantASC)
		}
		if got := detectTRC(b); got != wantTRC {
			t.Errorf("%s: detectTRC got %v, want %v", name, got, wantTRC)
		}
		n++
	}
	if n < 40 {
		t.Errorf("looked at %d files, want the folder's 40 or more", n)
	}
}

func TestDetectTextHandMade(t *testing.T) {
	tests := []struct {
		name     string
		head     string
		asc, trc bool
	}{
		{"candump", "(1696868256.123456) can0 123#DEADBEEF\n", false, false},
		{"candump padded", "   (1696868256.123456) can0 123#DEADBEEF\n", false, false},
		{"empty", "", false, false},
		{"blank", "\n\n  \n", false, false},
		{"ASC date", "date Sam Sep 30 15:06:13.191 2017\n", true, false},
		{"ASC date, BOM and blank lines", "\xEF\xBB\xBF\r\n\r\ndate Thu Apr 28 10:44:52.480 am 2022\r\n", true, false},
		{"ASC date cut in the head", "date Sam Sep 30 15:06", false, false},
		{"ASC base without date", "// comment\nbase hex  timestamps absolute\n", true, false},
		{"ASC base dec", "base dec\n", true, false},
		{"not a date", "date of the meeting: tomorrow\n", false, false},
		{"base of something", "base camp\n", false, false},
		{"TRC 2.1", ";$FILEVERSION=2.1\n;$STARTTIME=44548.6\n", false, true},
		{"TRC with BOM", "\xEF\xBB\xBF;$FILEVERSION=1.1\r\n", false, true},
		{"TRC 1.0", ";####\n;   C:\\x.trc\n;\n;    Start time: 18.12.2021 14:28:07.062\n", false, true},
		{"TRC 1.0 record after comments", ";\n;\n     1)     17535  00000100  8  00\n", false, true},
		{"TRC message number header", ";\n;   Message Number\n", false, true},
		{"comments only", "; just a comment\n; another\n", false, false},
		{"comment then candump", "; x\n(1.0) can0 123#\n", false, false},
		{"TRC record first", "     1)     17535  00000100  8  00\n", false, false},
	}
	for _, tt := range tests {
		if got := detectASC([]byte(tt.head)); got != tt.asc {
			t.Errorf("%s: detectASC got %v, want %v", tt.name, got, tt.asc)
		}
		if got := detectTRC([]byte(tt.head)); got != tt.trc {
			t.Errorf("%s: detectTRC got %v, want %v", tt.name, got, tt.trc)
		}
	}
}

// realHeads returns the first KiB of each capture of the formats folder
// whose name ends in ext, for fuzz seeds; none without the folder.
func realHeads(ext string) [][]byte {
	d, ok := realdata.Path()
	if !ok {
		return nil
	}
	ents, _ := os.ReadDir(filepath.Join(d, "formats"))
	var out [][]byte
	for _, e := range ents {
		if !strings.HasSuffix(e.Name(), ext) {
			continue
		}
		b, err := os.ReadFile(filepath.Join(d, "formats", e.Name()))
		if err != nil {
			continue
		}
		if len(b) > 1024 {
			b = b[:1024]
		}
		out = append(out, b)
	}
	return out
}

// fuzzText checks a text reader on arbitrary input: no panic; with
// SkipInvalid only frames and io.EOF; strictly, only *LineErrors; every
// frame well formed; and the frames candump can hold read back the same
// from a candump log.
func fuzzText(t *testing.T, in []byte, open func(io.Reader, Options) Source) {
	r := open(bytes.NewReader(in), Options{SkipInvalid: true})
	var frames []frame.Frame
	var names []string
	var f frame.Frame
	for {
		err := r.Next(&f)
		if err == io.EOF {
			break
		}
		if err != nil {
			// A header a TRC reader cannot read stops it even when
			// skipping.
			if tr, ok := r.(*TRCReader); ok && err == tr.fatal {
				break
			}
			t.Fatalf("with SkipInvalid: got %v, want only frames and io.EOF", err)
		}
		checkFrame(t, &f)
		if r.Interface(f.Bus) != fmt.Sprintf("can%d", f.Bus) {
			t.Fatalf("bus %d: interface %q", f.Bus, r.Interface(f.Bus))
		}
		if f.Flags&frame.Error == 0 && f.Time >= 0 {
			frames = append(frames, f)
			names = append(names, r.Interface(f.Bus))
		}
	}
	strict := open(bytes.NewReader(in), Options{})
	for k := 0; k < 1<<20; k++ {
		err := strict.Next(&f)
		if err == io.EOF {
			break
		}
		var le *LineError
		if err != nil && !errors.As(err, &le) {
			t.Fatalf("got %T %v, want a *LineError", err, err)
		}
		if le != nil && le.Line < 1 {
			t.Fatalf("line %d in %v", le.Line, le)
		}
		if tr, ok := strict.(*TRCReader); ok && tr.fatal != nil {
			break
		}
	}
	var out bytes.Buffer
	w := NewWriter(&out)
	for i := range frames {
		if err := w.Write(&frames[i], names[i]); err != nil {
			t.Fatalf("writing frame %+v: %v", frames[i], err)
		}
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	back := NewReader(&out, Options{})
	for i := range frames {
		if err := back.Next(&f); err != nil {
			t.Fatalf("re-reading frame %d: %v", i, err)
		}
		if f != frames[i] {
			t.Fatalf("frame %d: got %+v, want %+v", i, f, frames[i])
		}
	}
}

// checkFrame fails on a frame no reader may return.
func checkFrame(t *testing.T, f *frame.Frame) {
	t.Helper()
	max := uint8(8)
	if f.Flags&frame.FD != 0 {
		max = frame.MaxLen
	}
	switch {
	case f.Len > max:
		t.Fatalf("length %d over %d: %+v", f.Len, max, *f)
	case f.Flags&frame.Remote != 0 && f.Flags&frame.FD != 0:
		t.Fatalf("remote CAN FD frame: %+v", *f)
	case f.Flags&(frame.BRS|frame.ESI) != 0 && f.Flags&frame.FD == 0:
		t.Fatalf("BRS or ESI without FD: %+v", *f)
	case f.Flags&frame.Extended == 0 && f.ID > maskStdID, f.ID > maskExtID:
		t.Fatalf("ID too wide: %+v", *f)
	case f.Flags&frame.Error != 0 && (f.Flags != frame.Error || f.ID != 0 || f.Len != 0):
		t.Fatalf("error frame with more than its time and bus: %+v", *f)
	}
	from := int(f.Len)
	if f.Flags&frame.Remote != 0 {
		from = 0
	}
	for i := from; i < len(f.Data); i++ {
		if f.Data[i] != 0 {
			t.Fatalf("data past the length: %+v", *f)
		}
	}
}

// textCycle reads head once, then body again and again, forever.
type textCycle struct {
	head, body []byte
	off        int
}

func (c *textCycle) Read(p []byte) (int, error) {
	if len(c.head) > 0 {
		n := copy(p, c.head)
		c.head = c.head[n:]
		return n, nil
	}
	n := 0
	for n < len(p) {
		k := copy(p[n:], c.body[c.off:])
		n += k
		c.off = (c.off + k) % len(c.body)
	}
	return n, nil
}

// benchText reads b.N frames from an endless capture (the header once,
// then the body over and over) and reports frames/s and allocations per
// frame.
func benchText(b *testing.B, src Source, bytesPerFrame int) {
	var f frame.Frame
	for i := 0; i < 1000; i++ { // past the header, buffers filled
		if err := src.Next(&f); err != nil {
			b.Fatal(err)
		}
	}
	b.SetBytes(int64(bytesPerFrame))
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if err := src.Next(&f); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "frames/s")
}

// allocsText checks that reading frames (and skipping bad lines) does not
// allocate once the reader has started.
func allocsText(t *testing.T, src Source) {
	t.Helper()
	var f frame.Frame
	for i := 0; i < 100; i++ {
		if err := src.Next(&f); err != nil {
			t.Fatal(err)
		}
	}
	var err error
	allocs := testing.AllocsPerRun(5000, func() {
		if e := src.Next(&f); e != nil {
			err = e
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	if allocs != 0 {
		t.Errorf("got %v allocations a frame, want 0", allocs)
	}
}

// TestTextBusNames: the interface names of the text readers are "can0"
// to "can255", each its own string.
func TestTextBusNames(t *testing.T) {
	for i, got := range textBusNames {
		if want := "can" + strconv.Itoa(i); got != want {
			t.Errorf("textBusNames[%d]: got %q, want %q", i, got, want)
		}
	}
}
