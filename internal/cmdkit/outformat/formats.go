package outformat

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/yukart/candec/decoder"
	"github.com/yukart/candec/frame"
	"github.com/yukart/candec/internal/cmdkit/valuelog"
)

// Format is one output format: a row of the table.
type Format struct {
	// Name is what --format calls it; Aliases are other names it
	// accepts.
	Name    string
	Aliases []string
	// Ext is the extension of its files.
	Ext string
	// Binary: not text, so never written to a terminal.
	Binary bool
	// Note says what it is in a word or two, for the help.
	Note string
	// New returns the writer of values to w. dbc gives the identity of
	// the decode's DBC files (a hash), for a format that records it; it
	// reads the files again, so a format that does not is not to call
	// it.
	New func(w io.Writer, dbc func() (string, error)) (Sink, error)
	// OpenLake opens the data lake of cfg for writing (--out-dir); nil
	// for a format that writes no lake.
	OpenLake func(cfg LakeConfig) (Lake, error)
}

// formats is the table, in the order the help lists them. A row in a
// package of its own appends itself (Register) when a binary imports it.
var formats = []Format{
	{Name: "json", Aliases: []string{"jsonl"}, Ext: ".jsonl", Note: "JSON lines", New: textWriter(valuelog.JSON)},
	{Name: "csv", Ext: ".csv", New: textWriter(valuelog.CSV)},
}

// absent names the formats of the developer's binary that a binary
// without their package (the car's) leaves out.
var absent = []string{"parquet"}

// ErrNotInBuild is the error of a format this binary leaves out.
var ErrNotInBuild = errors.New("outformat: not in this build (the car's); use the developer's build")

// Register appends the row f to the table. A row in a package of its
// own (internal/cmdkit/outformat/parquetrow) calls it from its init, so a
// binary has the row if and only if it imports that package.
func Register(f Format) { formats = append(formats, f) }

// textWriter is the constructor of a format of value lines (valuelog).
func textWriter(f valuelog.Format) func(io.Writer, func() (string, error)) (Sink, error) {
	return func(w io.Writer, _ func() (string, error)) (Sink, error) { return valuelog.NewWriter(w, f), nil }
}

// Sink writes decoded values in a format.
type Sink interface {
	// Write writes the values of frame f, received on interface iface.
	Write(f *frame.Frame, iface string, vals []decoder.Value) error
	// Lines is how many values were written; Truncated how many were
	// left out because their signal did not fit in a short frame.
	Lines() int
	Truncated() int
	// Close writes what is buffered (and a footer, for a format that
	// has one); it leaves the output open.
	Close() error
}

// LakeConfig says where a lake is and what makes it.
type LakeConfig struct {
	// Dir is the lake's root directory, or s3://bucket/prefix for a
	// lake in object storage (where the format can write one).
	Dir string
	// Context bounds the requests to an object store; nil is
	// context.Background().
	Context context.Context
	// DBC identifies the DBC files that decode the lake's inputs.
	DBC string
	// Signals are the decode's signal globs.
	Signals []string
	// Log, when not nil, gets a line for each retry of a request to
	// an object store (what, where, attempt n of m).
	Log io.Writer
}

// Lake is a data lake open for writing, many captures into it.
type Lake interface {
	// NewWriter returns a writer of captures into the lake, one
	// capture after the other; writers may run at once.
	NewWriter() LakeWriter
	// Removed is how many temporary files of an unfinished run were
	// removed when the lake was opened.
	Removed() int
	Close() error
}

// LakeWriter writes one capture at a time into a lake.
type LakeWriter interface {
	// Write writes the values of frame f, as Sink.Write.
	Write(f *frame.Frame, iface string, vals []decoder.Value) error
	// Commit puts what was written since the last Commit or Abort into
	// the lake as the capture of hash input; Abort drops it.
	Commit(input string) error
	Abort()
	// Files and Rows are the files and rows committed; Truncated as
	// Sink's, for everything written.
	Files() int
	Rows() int64
	Truncated() int
}

// Lookup returns the format called name.
func Lookup(name string) (Format, error) {
	for _, f := range formats {
		if f.Name == name || slices.Contains(f.Aliases, name) {
			return f, nil
		}
	}
	if slices.Contains(absent, name) {
		return Format{}, fmt.Errorf("%s: %w", name, ErrNotInBuild)
	}
	return Format{}, fmt.Errorf("outformat: unknown format %q (want %s)", name, Names())
}

// Names lists the formats' names as text: "json, csv or parquet".
func Names() string { return list(false) }

// Help lists the formats with their notes, for the help: "json (JSON
// lines), csv or …".
func Help() string { return list(true) }

func list(notes bool) string {
	var names []string
	for _, f := range formats {
		n := f.Name
		if notes && f.Note != "" {
			n += " (" + f.Note + ")"
		}
		names = append(names, n)
	}
	if len(names) < 2 {
		return strings.Join(names, "")
	}
	return strings.Join(names[:len(names)-1], ", ") + " or " + names[len(names)-1]
}

// LakeFormat returns the format that writes a data lake, if this build
// has one.
func LakeFormat() (Format, bool) {
	for _, f := range formats {
		if f.OpenLake != nil {
			return f, true
		}
	}
	return Format{}, false
}
