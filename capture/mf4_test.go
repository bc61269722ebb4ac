package capture

import (
	"bytes"
	"encoding/binary"
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

// TestMF4Formats compares every MF4 file of the formats folder with its
// expected frames.
func TestMF4Formats(t *testing.T) {
	dir := formatsDir(t)
	n := 0
	for _, r := range formatIndex(t, dir) {
		if !strings.HasPrefix(r.format, "ASAM MDF 4") || strings.HasSuffix(r.file, ".gz") {
			continue
		}
		n++
		t.Run(r.file, func(t *testing.T) {
			in, err := os.Open(filepath.Join(dir, r.file))
			if err != nil {
				t.Fatal(err)
			}
			defer in.Close()
			head := make([]byte, 4096)
			k, _ := in.ReadAt(head, 0)
			if !detectMF4(head[:k]) {
				t.Fatalf("detectMF4: got false, want true")
			}
			want, err := os.Open(filepath.Join(dir, r.expected))
			if err != nil {
				t.Fatal(err)
			}
			defer want.Close()
			src := NewMF4Reader(in, Options{})
			defer src.Close()
			frames, errs := compareFrames(t, r.file, src, want, time.Microsecond)
			if frames != r.frames || errs != r.errorFrames {
				t.Errorf("got %d frames and %d error frames, want %d and %d", frames, errs, r.frames, r.errorFrames)
			}
		})
	}
	if n != 4 {
		t.Errorf("got %d MF4 files in INDEX.tsv, want 4", n)
	}
}

// readAll reads every frame of src with its interface name, and the
// error that ended it (nil for io.EOF).
func readMF4All(src Source) ([]frame.Frame, []string, error) {
	var out []frame.Frame
	var names []string
	var f frame.Frame
	for {
		err := src.Next(&f)
		if errors.Is(err, io.EOF) {
			return out, names, nil
		}
		if err != nil {
			return out, names, err
		}
		out = append(out, f)
		names = append(names, src.Interface(f.Bus))
	}
}

// sameFrames fails where got differs from want.
func sameFrames(t *testing.T, got []frame.Frame, names []string, want []frame.Frame) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("got %d frames, want %d", len(got), len(want))
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("frame %d: got %+v, want %+v", i, got[i], want[i])
		}
		if n := "can" + strconv.Itoa(int(want[i].Bus)); names[i] != n {
			t.Fatalf("frame %d: interface %q, want %q", i, names[i], n)
		}
	}
}

// TestMF4Layouts writes frames in each layout and container and reads
// them back.
func TestMF4Layouts(t *testing.T) {
	kinds := testFrames(3000, true, true, false)
	classic := testFrames(3000, false, false, true)
	plain := testFrames(3000, true, false, false)
	// Error frames come out with their bus only.
	for _, c := range []struct {
		name   string
		file   []byte
		frames []frame.Frame
	}{
		{"canedge DT open", buildCANedge(kinds, mdfDTOpen), kinds},
		{"canedge DT", buildCANedge(kinds, mdfDT), kinds},
		{"canedge DZ", buildCANedge(kinds, mdfDZ), kinds},
		{"canedge DZ transposed", buildCANedge(kinds, mdfDZT), kinds},
		{"canedge DL", buildCANedge(kinds, mdfDL), kinds},
		{"canedge HL", buildCANedge(kinds, mdfHL), kinds},
		{"sorted SD", buildSorted(plain, mdfDT, mdfDT), plain},
		{"sorted DZ, SD in DZ", buildSorted(plain, mdfDZ, mdfDZ), plain},
		{"sorted DL, SD in DL", buildSorted(plain, mdfDL, mdfDL), plain},
		{"sorted HL, SD in HL", buildSorted(plain, mdfHL, mdfHL), plain},
		{"01.07 DT open", build0107(classic, mdfDTOpen), classic},
		{"01.07 DZ transposed", build0107(classic, mdfDZT), classic},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, names, err := readMF4All(NewMF4Reader(bytes.NewReader(c.file), Options{}))
			if err != nil {
				t.Fatal(err)
			}
			sameFrames(t, got, names, c.frames)
		})
	}
}

// TestMF4Truncated cuts a finalized file inside its data: the frames
// before the cut, then an error at the end of the file.
func TestMF4Truncated(t *testing.T) {
	frames := testFrames(100, false, false, false)
	file := buildCANedge(frames, mdfDT)
	cut := len(file) - 500
	got, _, err := readMF4All(NewMF4Reader(bytes.NewReader(file[:cut]), Options{}))
	var oe *OffsetError
	if !errors.As(err, &oe) || oe.Offset != int64(cut) {
		t.Fatalf("got %v, want an *OffsetError at byte %d", err, cut)
	}
	if len(got) < 50 || len(got) >= 100 {
		t.Errorf("got %d frames before the cut, want most of the 100", len(got))
	}
}

// TestMF4UnfinalizedEnd reads an unfinalized file whose last record was
// cut (the logger lost power, the file was copied while written): every
// whole frame, then an *OffsetError at the cut record saying how many of
// its bytes were left unread; with SkipInvalid, the record is counted as
// skipped and the reading ends with io.EOF.
func TestMF4UnfinalizedEnd(t *testing.T) {
	frames := testFrames(100, true, true, false)
	file := buildCANedge(frames, mdfDTOpen)
	if got, _, err := readMF4All(NewMF4Reader(bytes.NewReader(file), Options{})); err != nil || len(got) != len(frames) {
		t.Fatalf("whole file: got %d frames and %v, want %d and io.EOF", len(got), err, len(frames))
	}
	// 20 bytes off the end is a record boundary: whole records, nothing
	// left unread, and nothing to tell from a file the logger closed.
	got, _, err := readMF4All(NewMF4Reader(bytes.NewReader(file[:len(file)-20]), Options{}))
	if err != nil || len(got) < len(frames)-1 {
		t.Errorf("cut on a record boundary: got %d frames and %v, want %d or more and io.EOF", len(got), err, len(frames)-1)
	}
	for _, cut := range []int{1, 5, 21, 25, 30, 40, 60} {
		size := len(file) - cut
		got, names, err := readMF4All(NewMF4Reader(bytes.NewReader(file[:size]), Options{}))
		var oe *OffsetError
		if !errors.As(err, &oe) {
			t.Fatalf("cut %d: got %v, want an *OffsetError at the cut record", cut, err)
		}
		left := int64(size) - oe.Offset
		if want := fmt.Sprintf("ends %d bytes into this record, which was left unread", left); left <= 0 || !strings.Contains(oe.Msg, want) {
			t.Errorf("cut %d: got %q at byte %d, want it to say %q", cut, oe.Msg, oe.Offset, want)
		}
		want := frames
		if len(got) < len(frames) {
			want = frames[:len(got)]
		}
		if len(got) < 95 {
			t.Fatalf("cut %d: got %d frames, want at least 95", cut, len(got))
		}
		sameFrames(t, got, names, want)

		r := NewMF4Reader(bytes.NewReader(file[:size]), Options{SkipInvalid: true})
		skipGot, _, err := readMF4All(r)
		if err != nil || len(skipGot) != len(got) || r.Skipped() != 1 {
			t.Errorf("cut %d, SkipInvalid: got %d frames, %d skipped, %v; want %d, 1 and io.EOF", cut, len(skipGot), r.Skipped(), err, len(got))
		}
	}
}

// TestMF4BadRecord gives a record with bus channel 0 an *OffsetError at
// the record's byte, then reads on; SkipInvalid skips it and counts.
func TestMF4BadRecord(t *testing.T) {
	frames := testFrames(10, false, false, false)
	file := buildCANedge(frames, mdfDT)
	// The third data frame's record: find it by its record id and
	// clear its BusChannel bits.
	rec := bytes.Index(file, canedgeRecord(&frames[2], 8+uint64(frames[0].Len)+uint64(frames[1].Len))) - 1
	if rec < 0 {
		t.Fatal("record not found")
	}
	file[rec+1+8] &^= 6
	src := NewMF4Reader(bytes.NewReader(file), Options{})
	var f frame.Frame
	var errs []error
	n := 0
	for {
		err := src.Next(&f)
		if err == io.EOF {
			break
		}
		if err != nil {
			errs = append(errs, err)
			continue
		}
		n++
	}
	var oe *OffsetError
	if len(errs) != 1 || !errors.As(errs[0], &oe) || oe.Offset != int64(rec) {
		t.Fatalf("got errors %v, want one *OffsetError at byte %d", errs, rec)
	}
	if n != 9 {
		t.Errorf("got %d frames, want 9", n)
	}
	skip := NewMF4Reader(bytes.NewReader(file), Options{SkipInvalid: true})
	got, _, err := readMF4All(skip)
	if err != nil || len(got) != 9 || skip.Skipped() != 1 {
		t.Errorf("SkipInvalid: got %d frames, %d skipped, %v; want 9, 1, nil", len(got), skip.Skipped(), err)
	}
}

// TestMF4Refuses gives broken files an *OffsetError, without hanging
// or allocating what a length field says.
func TestMF4Refuses(t *testing.T) {
	frames := testFrames(20, false, false, false)
	base := buildCANedge(frames, mdfDT)
	dgOff := int64(binary.LittleEndian.Uint64(base[64+24:]))
	put := func(b []byte, at int64, v uint64) []byte {
		b = bytes.Clone(b)
		binary.LittleEndian.PutUint64(b[at:], v)
		return b
	}
	cnOff := int64(bytes.Index(base, []byte("##CN")))
	dtOff := int64(bytes.LastIndex(base, []byte("##DT")))
	longer := append(put(base, dtOff+8, uint64(len(base))-uint64(dtOff)+1), 0x77)
	dz := buildCANedge(frames, mdfDZ)
	dzOff := int64(bytes.LastIndex(dz, []byte("##DZ")))
	for _, c := range []struct {
		name string
		file []byte
		at   int64
		msg  string
	}{
		{"data group linking itself", put(base, dgOff+24, uint64(dgOff)), dgOff, "cycle"},
		{"channel linking itself", put(base, cnOff+24, uint64(cnOff)), cnOff, "cycle"},
		{"block of 4 GB", put(base, dgOff+8, 4<<30), dgOff, "past the end"},
		{"link past the end", put(base, dgOff+24+8, 1<<40), 1 << 40, "outside the file"},
		{"DZ inflating to 1 GB", put(dz, dzOff+24+8, 1<<30), dzOff, "inflates to"},
		{"DZ lying about its length", put(dz, dzOff+24+8, 100), dzOff, "more bytes"},
		{"not MDF 4", append([]byte("MDF     3.30    "), make([]byte, 200)...), 0, "not an MDF 4"},
		{"unknown record id", longer, int64(len(base)), "record id"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, _, err := readMF4All(NewMF4Reader(bytes.NewReader(c.file), Options{SkipInvalid: true}))
			var oe *OffsetError
			if !errors.As(err, &oe) || oe.Offset != c.at || !strings.Contains(oe.Msg, c.msg) {
				t.Fatalf("got %v, want an *OffsetError at byte %d saying %q", err, c.at, c.msg)
			}
		})
	}
}

// TestMF4StartTime: the time-zone and DST offsets describe the local
// time; the start time is UTC with or without them.
func TestMF4StartTime(t *testing.T) {
	frames := testFrames(5, false, false, false)
	file := buildCANedge(frames, mdfDT)
	binary.LittleEndian.PutUint16(file[64+24+48+8:], 120) // tz +2 h
	binary.LittleEndian.PutUint16(file[64+24+48+10:], 60) // DST +1 h
	got, names, err := readMF4All(NewMF4Reader(bytes.NewReader(file), Options{}))
	if err != nil {
		t.Fatal(err)
	}
	sameFrames(t, got, names, frames)
}

// nonSeeker hides everything of a reader but Read.
type nonSeeker struct{ r io.Reader }

func (n nonSeeker) Read(p []byte) (int, error) { return n.r.Read(p) }

// TestMF4Spool reads a non-seekable input through a temporary copy that
// is gone at the end.
func TestMF4Spool(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("TMPDIR", dir)
	frames := testFrames(500, true, true, false)
	src := NewMF4Reader(nonSeeker{bytes.NewReader(buildCANedge(frames, mdfDZT))}, Options{})
	got, names, err := readMF4All(src)
	if err != nil {
		t.Fatal(err)
	}
	sameFrames(t, got, names, frames)
	if err := src.Close(); err != nil {
		t.Fatal(err)
	}
	if left, _ := os.ReadDir(dir); len(left) != 0 {
		t.Errorf("got %d files left in the temporary folder, want 0", len(left))
	}
}

// TestMF4Allocs: Next allocates nothing per frame once every group's
// cursor is open.
func TestMF4Allocs(t *testing.T) {
	for _, c := range []struct {
		name string
		file []byte
	}{
		{"canedge", buildCANedge(testFrames(20000, true, true, false), mdfDT)},
		{"sorted", buildSorted(testFrames(20000, true, false, false), mdfDL, mdfDZ)},
		{"01.07", build0107(testFrames(20000, false, false, true), mdfDTOpen)},
	} {
		src := NewMF4Reader(bytes.NewReader(c.file), Options{})
		var f frame.Frame
		for range 100 {
			if err := src.Next(&f); err != nil {
				t.Fatal(err)
			}
		}
		if a := testing.AllocsPerRun(10000, func() {
			if err := src.Next(&f); err != nil {
				t.Fatal(err)
			}
		}); a != 0 {
			t.Errorf("%s: got %v allocations a frame, want 0", c.name, a)
		}
	}
}

func TestDetectMF4(t *testing.T) {
	for _, c := range []struct {
		head string
		want bool
	}{
		{"MDF     4.11    ", true},
		{"UnFinMF 4.10    ", true},
		{"MDF     4.", true},
		{"MDF     3.30    ", false},
		{"MDF     ", false},
		{"mdf     4.11    ", false},
		{"(1.0) can0 123#", false},
	} {
		if got := detectMF4([]byte(c.head)); got != c.want {
			t.Errorf("detectMF4(%q): got %v, want %v", c.head, got, c.want)
		}
	}
}

// BenchmarkReadMF4 reads an unfinalized CANedge file (uncompressed DT,
// DataBytes in a VLSD group): one op is one frame.
func BenchmarkReadMF4(b *testing.B) {
	file := buildCANedge(testFrames(200000, false, false, false), mdfDT)
	b.SetBytes(int64(len(file)) / 200000)
	b.ReportAllocs()
	src := NewMF4Reader(bytes.NewReader(file), Options{})
	var f frame.Frame
	for b.Loop() {
		if err := src.Next(&f); err != nil {
			if err != io.EOF {
				b.Fatal(err)
			}
			src = NewMF4Reader(bytes.NewReader(file), Options{})
		}
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "frames/s")
}

// FuzzMF4 feeds arbitrary files to an MF4Reader: it must not panic or
// hang, and every error is an *OffsetError.
func FuzzMF4(f *testing.F) {
	fr := testFrames(6, true, true, true)
	for _, b := range [][]byte{
		buildCANedge(fr, mdfDTOpen), buildCANedge(fr, mdfDZT), buildCANedge(fr, mdfHL),
		buildSorted(fr[:3], mdfDL, mdfDT), build0107(testFrames(4, false, false, true), mdfDT),
	} {
		f.Add(b)
	}
	// The real files' first KiB: their identification, header and first
	// metadata blocks, links running past the end.
	if d, ok := realdata.Path(); ok {
		files, _ := filepath.Glob(filepath.Join(d, "formats", "*.MF4"))
		for _, name := range files {
			if b, err := os.ReadFile(name); err == nil {
				f.Add(b[:min(len(b), 1024)])
			}
		}
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		for _, skip := range []bool{false, true} {
			src := NewMF4Reader(bytes.NewReader(in), Options{SkipInvalid: skip})
			var fr frame.Frame
			for range 1 << 16 {
				err := src.Next(&fr)
				if err == io.EOF {
					break
				}
				if err != nil {
					var oe *OffsetError
					if !errors.As(err, &oe) {
						t.Fatalf("got %v, want an *OffsetError", err)
					}
					if skip || src.err != nil {
						break
					}
					continue
				}
				if fr.Len > frame.MaxLen || (fr.Flags&frame.FD == 0 && fr.Len > 8) {
					t.Fatalf("frame of %d bytes, flags %b", fr.Len, fr.Flags)
				}
				if src.Interface(fr.Bus) == "" {
					t.Fatalf("frame on bus %d without an interface", fr.Bus)
				}
			}
		}
	})
}

func TestMF4Untranspose(t *testing.T) {
	for _, c := range []struct {
		in   string
		cols int
		want string
	}{
		{"adbecf", 3, "abcdef"},     // two records of three bytes
		{"adbecfXY", 3, "abcdefXY"}, // the remainder as it was
		{"abc", 4, "abc"},           // fewer bytes than columns
		{"abc", 1 << 30, "abc"},     // and not a loop over the columns
	} {
		out := make([]byte, len(c.in))
		untranspose(out, []byte(c.in), c.cols)
		if string(out) != c.want {
			t.Errorf("untranspose(%q, %d): got %q, want %q", c.in, c.cols, out, c.want)
		}
	}
}
