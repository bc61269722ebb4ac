package outfile

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/google/renameio/v2"
)

// ErrSameFile is returned by Create when the output is one of the inputs.
var ErrSameFile = errors.New("outfile: the output is an input")

// Perm is the mode a new output file is created with, less the umask, as
// os.Create and a shell's redirection give: 0644 under the common umask
// 022, 0664 under 002. A file that exists keeps its mode.
const Perm = 0o666

// File is an output being written. Write to it, then Commit; Abort (safe to
// defer after Commit) discards an uncommitted output.
type File struct {
	name    string
	w       io.Writer
	pending *renameio.PendingFile // regular files: written aside, renamed on Commit
	direct  *os.File              // devices and pipes: written in place
	err     error                 // the first write error
	done    bool
}

// Create prepares the output name ("-" writes to stdout). It fails with
// ErrSameFile when name is the same file as any of inputs ("-" and
// missing inputs are ignored), and it creates nothing visible under name
// until Commit.
func Create(name string, stdout io.Writer, inputs ...string) (*File, error) {
	if name == "-" || name == "" {
		return &File{name: "-", w: stdout}, nil
	}
	if err := CheckNotInput(name, inputs...); err != nil {
		return nil, err
	}
	fi, err := os.Stat(name)
	switch {
	case err == nil && !fi.Mode().IsRegular():
		if fi.IsDir() {
			return nil, fmt.Errorf("outfile: %s is a directory", name)
		}
		f, err := openDirect(name, fi)
		if err != nil {
			return nil, err
		}
		return &File{name: name, w: f, direct: f}, nil
	case err != nil && !errors.Is(err, fs.ErrNotExist):
		return nil, err
	}
	opts := []renameio.Option{
		renameio.WithTempDir(filepath.Dir(name)),
		renameio.WithPermissions(Perm),
		renameio.WithExistingPermissions(),
	}
	p, err := renameio.NewPendingFile(name, opts...)
	if err != nil {
		return nil, createError(name, err)
	}
	return &File{name: name, w: p, pending: p}, nil
}

// CheckNotInput returns ErrSameFile (naming both) when out is the same file
// as one of inputs. A name that does not exist yet is never an input.
func CheckNotInput(out string, inputs ...string) error {
	if out == "-" || out == "" {
		return nil
	}
	ofi, err := os.Stat(out)
	if err != nil || !ofi.Mode().IsRegular() {
		return nil
	}
	for _, in := range inputs {
		if in == "-" || in == "" {
			continue
		}
		ifi, err := os.Stat(in)
		if err == nil && os.SameFile(ofi, ifi) {
			return fmt.Errorf("%w: %s is the input %s; write to another file", ErrSameFile, out, in)
		}
	}
	return nil
}

// createError words a failure to create the temporary file beside name
// by the name the user gave and its directory: the temporary file's own
// name is an inner detail the user never chose.
func createError(name string, err error) error {
	dir := filepath.Dir(name)
	if errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("outfile: %s: the directory %s does not exist", name, dir)
	}
	var pe *fs.PathError
	if errors.As(err, &pe) {
		err = pe.Err
	}
	return fmt.Errorf("outfile: %s: cannot create a file in %s: %w", name, dir, err)
}

// Name is the output's name ("-" for standard output).
func (f *File) Name() string { return f.name }

// Write writes to the output (the temporary file for a regular file). Its
// error names the output, not the temporary file, and is kept: every
// later Write and Commit return it.
func (f *File) Write(p []byte) (int, error) {
	if f.err != nil {
		return 0, f.err
	}
	n, err := f.w.Write(p)
	if err != nil {
		var pe *fs.PathError
		if errors.As(err, &pe) {
			err = pe.Err // its path is the temporary file's
		}
		name := f.name
		if name == "-" {
			name = "standard output"
		}
		f.err = fmt.Errorf("outfile: write %s: %w", name, err)
	}
	return n, f.err
}

// Err returns the first error of Write, nil if there was none: a
// command tells by it a failed output from a bad input.
func (f *File) Err() error { return f.err }

// Commit makes the output visible: a regular file is synced and renamed
// over name. After a failed Write it commits nothing, as Abort, and
// returns that error: a file cut short never replaces a whole one. It is
// an error to write after Commit.
func (f *File) Commit() error {
	if f.done {
		return f.err
	}
	if f.err != nil {
		f.Abort()
		return f.err
	}
	f.done = true
	switch {
	case f.pending != nil:
		if err := f.pending.CloseAtomicallyReplace(); err != nil {
			f.pending.Cleanup()
			return fmt.Errorf("outfile: %s: %w", f.name, err)
		}
	case f.direct != nil:
		if err := f.direct.Close(); err != nil {
			return fmt.Errorf("outfile: %s: %w", f.name, err)
		}
	}
	return nil
}

// Abort discards an uncommitted output: the temporary file is removed and
// name is left as it was. A device or pipe is closed, never removed. Abort
// after Commit does nothing.
func (f *File) Abort() {
	if f.done {
		return
	}
	f.done = true
	switch {
	case f.pending != nil:
		f.pending.Cleanup()
	case f.direct != nil:
		f.direct.Close()
	}
}
