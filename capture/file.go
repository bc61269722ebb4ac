package capture

import (
	"fmt"
	"io"
	"os"
)

// File is a capture opened by Open: a Source that reads a file, or
// standard input, to be closed after reading.
type File struct {
	Source
	name   string
	format string
	size   int64
	f      *os.File // nil for standard input, which Close leaves open
}

// Open opens the capture file name, or standard input for "-"
// (Options.Stdin, or os.Stdin when that is nil), and reads its head to
// choose its format as NewSource does. A file that does not exist is the
// os error naming it; a directory is refused; content of no known format
// is ErrFormat.
func Open(name string, opts Options) (*File, error) {
	c := &File{name: name}
	var r io.Reader
	if name == "-" {
		r = opts.Stdin
		if r == nil {
			r = os.Stdin
		}
	} else {
		f, err := os.Open(name)
		if err != nil {
			return nil, err
		}
		c.f, r = f, f
	}
	if f, ok := r.(*os.File); ok {
		// Redirected from a file, standard input has a size too.
		if fi, err := f.Stat(); err == nil {
			switch {
			case fi.IsDir():
				c.Close()
				return nil, fmt.Errorf("capture: %s is a directory, not a capture", c.shown())
			case fi.Mode().IsRegular():
				c.size = fi.Size()
			}
		}
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
	if c.f == nil {
		return nil
	}
	return c.f.Close()
}
