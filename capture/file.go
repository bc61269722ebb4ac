package capture

import (
	"context"
	"fmt"
	"io"
	"io/fs"
	"os"
)

// File is a capture opened by Open: a Source that reads a file, or
// standard input, to be closed after reading.
type File struct {
	Source
	name   string
	format string
	size   int64
	f      *os.File    // nil for standard input, which Close leaves open
	live   *LiveReader // nil for a regular file
}

// Open opens the capture file name, or standard input for "-"
// (Options.Stdin, or os.Stdin when that is nil), and reads its head to
// choose its format as NewSource does. A file that does not exist is the
// os error naming it; a directory is refused; content of no known format
// is ErrFormat.
func Open(name string, opts Options) (*File, error) {
	return OpenContext(context.Background(), name, opts)
}

// OpenContext is Open, ended by ctx wherever a pipe could make it wait:
// a source that is not a regular file (a pipe, a FIFO, a terminal, any
// io.Reader given as Options.Stdin) is read through a LiveReader, so
// that once ctx ends every read of it, from this one of the head to the
// last, returns ctx's error; and the open of a FIFO, which waits for a
// writer, ends with ctx too.
func OpenContext(ctx context.Context, name string, opts Options) (*File, error) {
	c := &File{name: name}
	var r io.Reader
	if name == "-" {
		r = opts.Stdin
		if r == nil {
			r = os.Stdin
		}
	} else {
		f, err := OpenFileContext(ctx, name)
		if err != nil {
			return nil, err
		}
		c.f, r = f, f
	}
	f, fi, regular := isRegular(r)
	switch {
	case regular:
		// Redirected from a file, standard input has a size too.
		c.size = fi.Size()
	case f != nil && fi != nil && fi.IsDir():
		c.Close()
		return nil, fmt.Errorf("capture: %s is a directory, not a capture", c.shown())
	default:
		c.live = NewLiveReader(ctx, r, nil)
		r = c.live
	}
	src, format, err := newSource(r, opts)
	if err != nil {
		c.Close()
		return nil, fmt.Errorf("%s: %w", c.shown(), err)
	}
	c.Source, c.format = src, format
	return c, nil
}

// shown is the name for messages.
func (c *File) shown() string {
	if c.name == "-" {
		return "stdin"
	}
	return c.name
}

// Name returns the name the capture was opened with ("-" for standard
// input).
func (c *File) Name() string { return c.name }

// Format returns the name of the capture's format, such as "candump".
func (c *File) Format() string { return c.format }

// Size returns the capture's size in bytes when it is a regular file,
// for a progress bar, and 0 when it is not (a pipe, a terminal).
func (c *File) Size() int64 { return c.size }

// Close closes the file. It leaves standard input open.
func (c *File) Close() error {
	if c.live != nil {
		c.live.Close()
	}
	if c.f == nil {
		return nil
	}
	return c.f.Close()
}

// OpenFileContext opens the file name for reading, as os.Open does,
// for a reader that takes a FIFO as a live capture. The open of a FIFO
// waits until a writer opens it too; it goes in a goroutine of its own,
// left when ctx ends (which closes the file if the open ever returns).
func OpenFileContext(ctx context.Context, name string) (*os.File, error) {
	if fi, err := os.Stat(name); err != nil || fi.Mode()&fs.ModeNamedPipe == 0 {
		return os.Open(name)
	}
	type opened struct {
		f   *os.File
		err error
	}
	oc := make(chan opened, 1)
	go func() {
		f, err := os.Open(name)
		oc <- opened{f, err}
	}()
	select {
	case o := <-oc:
		return o.f, o.err
	case <-ctx.Done():
		go func() {
			if o := <-oc; o.f != nil {
				o.f.Close()
			}
		}()
		return nil, fmt.Errorf("capture: %s: waiting for a writer: %w", name, ctx.Err())
	}
}
