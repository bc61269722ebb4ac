package dbc

import (
	"context"
	"fmt"

	"github.com/yukart/candec/internal/base/readfile"
)

// MaxFileSize is the largest DBC file Load reads: 64 MiB. The largest
// real DBC files are a few MiB; a bigger file is refused before it is
// read, with an error naming it, its size and the limit.
const MaxFileSize = 64 << 20

// Load reads, parses and compiles DBC files into one Database. See
// Parse and Compile for what is tolerated and what is an error.
//
// Load is stricter than Parse in one way. Parse skips what it does not
// know with a warning, so any text file (a capture, a log) parses as a
// DBC that defines nothing, and a service that decodes nothing would
// start without a word. Load therefore returns an *Error of kind
// ErrNoMessages, naming the file, when the files together define no
// message, or when one file defines nothing a DBC defines at all. A file
// of nodes, value tables or attributes beside a file of messages is
// fine. Parse itself accepts any snippet, for tools and tests that build
// a file from parts.
//
// Each path must name a regular file of at most MaxFileSize bytes: a
// FIFO, a device or a directory is refused without a read.
func Load(paths ...string) (*Database, error) {
	return LoadContext(context.Background(), paths...)
}

// LoadContext is Load, ended when ctx ends: between files, and while a
// file is read.
func LoadContext(ctx context.Context, paths ...string) (*Database, error) {
	files := make([]*File, 0, len(paths))
	for _, path := range paths {
		src, err := readfile.Read(ctx, path, MaxFileSize)
		if err != nil {
			return nil, fmt.Errorf("dbc: %w", err)
		}
		f, err := Parse(path, src)
		if err != nil {
			return nil, err
		}
		if err := ctx.Err(); err != nil {
			return nil, err // the parse of a big file takes a while
		}
		files = append(files, f)
	}
	if err := checkMessages(files); err != nil {
		return nil, err
	}
	return Compile(files...)
}

// DuplicateSignalNames returns the signal names that more than one
// message uses, each with its signals in database order. Consumers that
// name things by signal alone (MQTT topics) must qualify these with the
// message name.
func (db *Database) DuplicateSignalNames() map[string][]*Signal {
	byName := make(map[string][]*Signal)
	for _, s := range db.Signals {
		byName[s.Name] = append(byName[s.Name], s)
	}
	for name, ss := range byName {
		if len(ss) < 2 {
			delete(byName, name)
		}
	}
	return byName
}

// checkMessages returns ErrNoMessages for the first file that defines
// nothing, or for the first file when no file defines a message.
func checkMessages(files []*File) error {
	n := 0
	for _, f := range files {
		n += len(f.Messages)
	}
	for _, f := range files {
		if len(f.Messages) == 0 && (n == 0 || definesNothing(f)) {
			return &Error{File: f.Name, Line: 1, Column: 1, Msg: "no messages (no BO_ line): is this a DBC file?", Kind: ErrNoMessages}
		}
	}
	return nil
}

// definesNothing reports whether Parse found no definition in f: an
// empty file, or text whose every statement was skipped.
func definesNothing(f *File) bool {
	return len(f.Nodes) == 0 && len(f.ValueTables) == 0 && len(f.Messages) == 0 &&
		len(f.Transmitters) == 0 && len(f.EnvVars) == 0 && len(f.Comments) == 0 &&
		len(f.AttributeDefs) == 0 && len(f.Defaults) == 0 && len(f.Attributes) == 0 &&
		len(f.ValueDescs) == 0 && len(f.ValueTypes) == 0 && len(f.MuxValues) == 0 &&
		len(f.SignalGroups) == 0
}
