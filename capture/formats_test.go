package capture

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/yukart/candec/frame"
	"github.com/yukart/candec/internal/testkit/realdata"
)

// formatsDir returns the folder of real captures in other formats, each
// with its NAME.expected.log, or skips the test.
func formatsDir(t testing.TB) string {
	t.Helper()
	d := filepath.Join(realdata.Dir(t), "formats")
	if _, err := os.Stat(d); err != nil {
		t.Skip("no formats folder in the reference data")
	}
	return d
}

// indexRow is one capture of the formats folder's INDEX.tsv.
type indexRow struct {
	file, format, expected string
	frames, errorFrames    int
}

// formatIndex reads INDEX.tsv.
func formatIndex(t testing.TB, dir string) []indexRow {
	t.Helper()
	f, err := os.Open(filepath.Join(dir, "INDEX.tsv"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var rows []indexRow
	sc := bufio.NewScanner(f)
	for n := 0; sc.Scan(); n++ {
		col := strings.Split(sc.Text(), "\t")
		if n == 0 || len(col) < 6 {
			continue
		}
		var r indexRow
		// A file with no expected frames (python-can's byte-pattern
		// BLF vectors) is listed but not compared; the expected column
		// may name a reference decode after the frames.
		r.file, r.format, r.expected = col[0], col[1], ""
		if e := strings.Fields(col[5]); len(e) > 0 {
			r.expected = e[0]
		} else {
			continue
		}
		fmt.Sscan(col[3], &r.frames)
		fmt.Sscan(col[4], &r.errorFrames)
		rows = append(rows, r)
	}
	return rows
}

// compareFrames reads every frame of got and of the candump log want
// and fails on the first difference, as the formats folder's README
// compares: in order, times within tol, then interface, ID and its
// width, kind, FD flags, remote DLC and data equal. Error frames of got
// are counted and left out. It returns the number of frames compared
// and of error frames left out.
func compareFrames(t *testing.T, name string, got Source, want io.Reader, tol time.Duration) (frames, errorFrames int) {
	t.Helper()
	wr := NewReader(want, Options{})
	var g, w frame.Frame
	for {
		var gerr error
		for {
			if gerr = got.Next(&g); gerr != nil || g.Flags&frame.Error == 0 {
				break
			}
			errorFrames++
		}
		werr := wr.Next(&w)
		if errors.Is(gerr, io.EOF) && errors.Is(werr, io.EOF) {
			return frames, errorFrames
		}
		if gerr != nil && !errors.Is(gerr, io.EOF) {
			t.Fatalf("%s: frame %d: %v", name, frames+1, gerr)
		}
		if werr != nil && !errors.Is(werr, io.EOF) {
			t.Fatalf("%s: expected file, frame %d: %v", name, frames+1, werr)
		}
		if gerr != nil {
			t.Fatalf("%s: %d frames, want more: next expected %s", name, frames, show(&w, wr.Interface(w.Bus)))
		}
		if werr != nil {
			t.Fatalf("%s: more than the %d frames expected: %s", name, frames, show(&g, got.Interface(g.Bus)))
		}
		frames++
		if d := time.Duration(g.Time - w.Time); d > tol || d < -tol {
			t.Fatalf("%s: frame %d: time %d, want %d (off by %s)\n got  %s\n want %s", name, frames, g.Time, w.Time, d,
				show(&g, got.Interface(g.Bus)), show(&w, wr.Interface(w.Bus)))
		}
		g.Time, w.Time = 0, 0
		if g != w || got.Interface(g.Bus) != wr.Interface(w.Bus) {
			t.Fatalf("%s: frame %d:\n got  %s\n want %s", name, frames, show(&g, got.Interface(g.Bus)), show(&w, wr.Interface(w.Bus)))
		}
	}
}

func show(f *frame.Frame, iface string) string {
	b, err := AppendLine(nil, f, iface)
	if err != nil {
		return fmt.Sprintf("%+v (%v)", *f, err)
	}
	return strings.TrimSpace(string(b))
}

// TestCandumpExpectedFiles reads every expected file of the formats
// folder with the candump reader and compares it with itself: it checks
// that the expected files parse, and that compareFrames compares.
func TestCandumpExpectedFiles(t *testing.T) {
	dir := formatsDir(t)
	rows := formatIndex(t, dir)
	if len(rows) == 0 {
		t.Fatal("INDEX.tsv lists no capture")
	}
	for _, r := range rows {
		a, err := os.Open(filepath.Join(dir, r.expected))
		if err != nil {
			t.Fatal(err)
		}
		b, err := os.Open(filepath.Join(dir, r.expected))
		if err != nil {
			t.Fatal(err)
		}
		n, _ := compareFrames(t, r.expected, NewReader(a, Options{}), b, 0)
		a.Close()
		b.Close()
		if n != r.frames {
			t.Errorf("%s: %d frames, INDEX.tsv says %d", r.expected, n, r.frames)
		}
	}
}
