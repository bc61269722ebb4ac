package decodejob

import (
	"context"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/yukart/candec/capture"
	"github.com/yukart/candec/internal/cmdkit/progress"
)

// input is the capture being decoded: a regular file read directly, or
// a pipe, FIFO or terminal read through a capture.LiveReader.
type input struct {
	r     io.Reader
	f     *os.File // the regular file, or nil
	n     int64    // bytes read, for the progress line
	size  int64    // 0 when unknown
	close func()
}

func (in *input) Read(p []byte) (int, error) {
	n, err := in.r.Read(p)
	in.n += int64(n)
	return n, err
}

// source returns what to read the capture from: in, or for a regular
// file in with random access to the file (seekFile), which a format
// that must seek (MF4) then reads in place rather than copy.
func (in *input) source() io.Reader {
	if in.f == nil {
		return in
	}
	return &seekFile{Reader: in, f: in.f, count: func(n int) { in.n += int64(n) }}
}

// seekFile is a counting reader of a regular file, f, with ReadAt and
// Seek of f beside it: capture.NewSource hands an io.ReaderAt and
// io.Seeker as it is to a format that needs random access, while the
// bytes read at random are counted too.
type seekFile struct {
	io.Reader // reads f through the counting
	f         *os.File
	count     func(n int)
	random    bool // f was read at random: Read did not see its content in order
}

func (s *seekFile) ReadAt(p []byte, off int64) (int, error) {
	n, err := s.f.ReadAt(p, off)
	s.random = true
	s.count(n)
	return n, err
}

func (s *seekFile) Seek(offset int64, whence int) (int64, error) {
	if offset != 0 || whence != io.SeekCurrent {
		s.random = true
	}
	return s.f.Seek(offset, whence)
}

// openInput opens a capture file, or stdin for "-". A source that is not
// a regular file (a pipe, a FIFO, a terminal) may block for as long as
// its writer likes, so it is read through a capture.LiveReader: idle (if
// not nil) is called before each wait for more input, and the end of ctx
// ends a blocked read.
func openInput(ctx context.Context, stdin io.Reader, name string, idle func()) (*input, error) {
	var (
		r     io.Reader
		close = func() {}
	)
	if name == "-" {
		r = stdin
	} else {
		f, err := capture.OpenFileContext(ctx, name)
		if err != nil {
			return nil, fmt.Errorf("decode: %w", err)
		}
		r, close = f, func() { f.Close() }
	}
	if f, ok := r.(*os.File); ok {
		fi, err := f.Stat()
		switch {
		case err == nil && fi.IsDir():
			close()
			return nil, fmt.Errorf("decode: %s is a directory, not a capture", name)
		case err == nil && fi.Mode().IsRegular():
			return &input{r: f, f: f, size: fi.Size(), close: close}, nil
		}
	}
	lr := capture.NewLiveReader(ctx, r, idle)
	return &input{r: lr, close: func() { lr.Close(); close() }}, nil
}

// decodeProgress shows a progress line on a terminal stderr once a decode
// has run for more than a second.
type decodeProgress struct {
	bar   *progress.Bar
	name  string
	size  int64
	start time.Time
	shown bool
}

// newDecodeProgress returns the progress line of the decode of name
// (size bytes, 0 when unknown), drawn on w when w is a terminal.
func newDecodeProgress(w io.Writer, terminal bool, name string, size int64) *decodeProgress {
	if !terminal {
		return &decodeProgress{}
	}
	return &decodeProgress{bar: progress.New(w, true), name: name, size: size, start: time.Now()}
}
func (p *decodeProgress) update(frames int64, in *input) {
	if p.bar == nil {
		return
	}
	now := time.Now()
	el := now.Sub(p.start)
	if el < time.Second {
		return
	}
	p.shown = true
	detail := fmt.Sprintf("%d frames", frames)
	st := progress.State{Label: "decode " + p.name, Detail: detail}
	if p.size > 0 && in.n > 0 {
		// Scale the bar by bytes read: elapsed so far over the projected
		// total. A file read at random (MF4) may be read more than once
		// in places.
		st.Done = el
		st.Total = time.Duration(float64(el) * float64(p.size) / float64(min(in.n, p.size)))
	}
	p.bar.Update(now, st)
}

func (p *decodeProgress) done() {
	if p.bar != nil && p.shown {
		p.bar.Clear()
	}
}
