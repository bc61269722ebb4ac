package capture

import (
	"context"
	"io"
	"os"
)

// LiveReader reads a source that may block for as long as its writer
// likes (a pipe, a FIFO, a terminal) so that the end of a context ends a
// blocked Read: a read of standard input cannot be interrupted
// otherwise, and a command waiting on a silent pipe would not stop on a
// signal. The source is read in a goroutine of its own, and the reader
// knows when a Read would block: then it calls idle, which can flush
// the output made so far to whoever reads it live.
//
// OpenContext reads every source that is not a regular file through a
// LiveReader; Close it after reading.
type LiveReader struct {
	ctx   context.Context
	idle  func()
	data  chan []byte // filled buffers; closed after the last one
	free  chan []byte // emptied buffers, back to the reading goroutine
	done  chan struct{}
	cur   []byte // what is left of the buffer being read
	whole []byte // cur's buffer, returned to free once read
	err   error  // the source's error, after the last buffer
	errc  chan error
}

// NewLiveReader returns a LiveReader of r whose Read returns ctx's
// error once ctx ends. idle, if not nil, is called before each wait for
// more input.
func NewLiveReader(ctx context.Context, r io.Reader, idle func()) *LiveReader {
	lr := &LiveReader{ctx: ctx, idle: idle, data: make(chan []byte), free: make(chan []byte, 2),
		done: make(chan struct{}), errc: make(chan error, 1)}
	lr.free <- make([]byte, 32<<10)
	lr.free <- make([]byte, 32<<10)
	go func() {
		defer close(lr.data)
		for {
			var buf []byte
			select {
			case buf = <-lr.free:
			case <-lr.done:
				return
			}
			n, err := r.Read(buf[:cap(buf)])
			if n > 0 {
				select {
				case lr.data <- buf[:n]:
				case <-lr.done:
					return
				}
			} else {
				lr.free <- buf
			}
			if err != nil {
				lr.errc <- err
				return
			}
		}
	}()
	return lr
}

// Read reads what the source has sent, waiting for more when nothing is
// left, until the source ends (its error, io.EOF at its end) or ctx ends
// (ctx's error).
func (lr *LiveReader) Read(p []byte) (int, error) {
	if len(lr.cur) == 0 {
		if lr.whole != nil {
			lr.free <- lr.whole
			lr.whole = nil
		}
		if lr.err != nil {
			return 0, lr.err
		}
		if err := lr.ctx.Err(); err != nil {
			return 0, err
		}
		var (
			buf []byte
			ok  bool
		)
		select {
		case buf, ok = <-lr.data:
		default:
			// Nothing to read now: the writer is slow, and whoever
			// reads the output should see what was made so far.
			if lr.idle != nil {
				lr.idle()
			}
			select {
			case buf, ok = <-lr.data:
			case <-lr.ctx.Done():
				return 0, lr.ctx.Err()
			}
		}
		if !ok {
			lr.err = <-lr.errc
			return 0, lr.err
		}
		lr.cur, lr.whole = buf, buf
	}
	n := copy(p, lr.cur)
	lr.cur = lr.cur[n:]
	return n, nil
}

// Close lets the reading goroutine end: at once when it waits to hand
// over a buffer, or when its read of the source returns. It does not
// close the source.
func (lr *LiveReader) Close() error {
	select {
	case <-lr.done:
	default:
		close(lr.done)
	}
	return nil
}

// isRegular reports whether r is a regular file, which is read as it is:
// a read of it cannot wait on a writer.
func isRegular(r io.Reader) (*os.File, os.FileInfo, bool) {
	f, ok := r.(*os.File)
	if !ok {
		return nil, nil, false
	}
	fi, err := f.Stat()
	if err != nil {
		return f, nil, false
	}
	return f, fi, fi.Mode().IsRegular()
}
