package dbc

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/yukart/candec/internal/readfile"
)

// ErrBusFiles is wrapped by every error of BusFiles.Set: a value that
// does not say which DBC files decode which bus.
var ErrBusFiles = errors.New("dbc: want [IFACE=]FILE[,FILE]")

// BusFiles names the DBC files of a capture of one or more buses, as
// every command's --dbc and the service's dbc key give them: All for
// every interface not named, Interfaces[name] for the interface name
// alone ("can1"). A frame of an interface without files is not decoded
// with another interface's.
//
// Set reads one value, "[IFACE=]FILE[,[IFACE=]FILE]...": an item
// IFACE=FILE starts the files of IFACE, and an item FILE belongs to the
// interface named before it in the value, or to every interface when
// none was (so "can0=pt.dbc,can1=adas.dbc", "can0=a.dbc,b.dbc" and
// "a.dbc,b.dbc" all read as they look). Set may be called again for
// another value: FILEs add to All, an IFACE= names a further interface.
// An interface named twice is an error (most likely a typo for another
// bus); so are an empty IFACE, an empty FILE and an empty value.
type BusFiles struct {
	All        []string
	Interfaces map[string][]string
}

// String returns the files as Set reads them back: All first, then each
// interface in name order.
func (b *BusFiles) String() string {
	if b == nil {
		return ""
	}
	items := slices.Clone(b.All)
	for _, name := range b.Names() {
		items = append(items, name+"="+strings.Join(b.Interfaces[name], ","))
	}
	return strings.Join(items, ",")
}

// Set adds the files of one value (see BusFiles).
func (b *BusFiles) Set(v string) error {
	iface, items := "", 0
	for _, item := range strings.Split(v, ",") {
		if item = strings.TrimSpace(item); item == "" {
			continue
		}
		items++
		name, file, named := strings.Cut(item, "=")
		if !named {
			if iface == "" {
				b.All = append(b.All, item)
			} else {
				b.Interfaces[iface] = append(b.Interfaces[iface], item)
			}
			continue
		}
		name, file = strings.TrimSpace(name), strings.TrimSpace(file)
		if err := b.add(name, file, item); err != nil {
			return err
		}
		iface = name
	}
	if items == 0 {
		return fmt.Errorf("%w: empty value", ErrBusFiles)
	}
	return nil
}

// add starts the files of interface name with file, from item.
func (b *BusFiles) add(name, file, item string) error {
	switch {
	case name == "":
		return fmt.Errorf("%w: %q names no interface before =", ErrBusFiles, item)
	case strings.ContainsAny(name, "/\\ \t"):
		return fmt.Errorf("%w: %q: %q is no interface name", ErrBusFiles, item, name)
	case file == "":
		return fmt.Errorf("%w: %q names no file after =", ErrBusFiles, item)
	}
	if prev, ok := b.Interfaces[name]; ok {
		return fmt.Errorf("%w: %s has two DBCs, %s and %s: give one %s=FILE[,FILE] (or was another interface meant?)",
			ErrBusFiles, name, strings.Join(prev, ","), file, name)
	}
	if b.Interfaces == nil {
		b.Interfaces = map[string][]string{}
	}
	b.Interfaces[name] = []string{file}
	return nil
}

// Empty reports whether no file is named.
func (b *BusFiles) Empty() bool { return len(b.All) == 0 && len(b.Interfaces) == 0 }

// Names returns the interfaces named, sorted.
func (b *BusFiles) Names() []string {
	names := make([]string, 0, len(b.Interfaces))
	for name := range b.Interfaces {
		names = append(names, name)
	}
	slices.Sort(names)
	return names
}

// Files lists every file named, All first: the inputs a command's
// output must not be.
func (b *BusFiles) Files() []string {
	out := slices.Clone(b.All)
	for _, name := range b.Names() {
		out = append(out, b.Interfaces[name]...)
	}
	return out
}

// Of returns the files that decode interface name: its own, or All.
func (b *BusFiles) Of(name string) []string {
	if fs, ok := b.Interfaces[name]; ok {
		return fs
	}
	return b.All
}

// Hash identifies the files by their contents and by which interface
// each decodes, whatever the order the interfaces were named in: a lake
// records it, and refuses to mix two.
func (b *BusFiles) Hash(ctx context.Context) (string, error) {
	h := sha256.New()
	add := func(label string, files []string) error {
		fmt.Fprintf(h, "%s\x00%d\x00", label, len(files))
		for _, f := range files {
			src, err := readfile.Read(ctx, f, MaxFileSize)
			if err != nil {
				return fmt.Errorf("dbc: %w", err)
			}
			fmt.Fprintf(h, "%d\x00", len(src))
			h.Write(src)
		}
		return nil
	}
	if err := add("*", b.All); err != nil {
		return "", err
	}
	for _, name := range b.Names() {
		if err := add(name, b.Interfaces[name]); err != nil {
			return "", err
		}
	}
	return "sha256:" + hex.EncodeToString(h.Sum(nil)), nil
}

// Buses are the databases of BusFiles, loaded by LoadBuses: All for
// every interface Interfaces does not name (nil when no file is for
// every interface).
type Buses struct {
	Files      BusFiles
	All        *Database
	Interfaces map[string]*Database
}

// LoadBuses loads the files of b, each interface's set once (a set
// named for two interfaces is one Database), in an order that makes the
// first error the same on every run. An error of an interface's files
// names the interface after the file's own error.
func LoadBuses(ctx context.Context, b BusFiles) (*Buses, error) {
	if b.Empty() {
		return nil, fmt.Errorf("%w: no DBC file given", ErrBusFiles)
	}
	out := &Buses{Files: b, Interfaces: map[string]*Database{}}
	loaded := map[string]*Database{}
	load := func(files []string) (*Database, error) {
		key := strings.Join(files, "\x00")
		if db, ok := loaded[key]; ok {
			return db, nil
		}
		db, err := LoadContext(ctx, files...)
		if err != nil {
			return nil, err
		}
		loaded[key] = db
		return db, nil
	}
	var err error
	if len(b.All) > 0 {
		if out.All, err = load(b.All); err != nil {
			return nil, err
		}
	}
	for _, name := range b.Names() {
		if out.Interfaces[name], err = load(b.Interfaces[name]); err != nil {
			return nil, fmt.Errorf("%w (the DBC of %s)", err, name)
		}
	}
	return out, nil
}

// Single returns the one Database of b when every interface named is
// decoded by the same files as every other (one set of files, for all
// interfaces or for the interfaces named); ok is false otherwise.
func (b *Buses) Single() (db *Database, ok bool) {
	db = b.All
	for _, name := range b.Files.Names() {
		d := b.Interfaces[name]
		if db != nil && d != db {
			return nil, false
		}
		db = d
	}
	return db, true
}

// Merged returns one Database of every message of every interface, for
// a consumer that decodes with one database (the pipeline) while the
// frames are chosen by interface beforehand (decoder.Router.Select): it
// is the one set of files when there is one, else all files loaded
// together. Two interfaces' files that define one ID differently cannot
// be merged: the error (ErrConflict) names both definitions.
func (b *Buses) Merged(ctx context.Context) (*Database, error) {
	if db, ok := b.Single(); ok {
		return db, nil
	}
	var files []string
	for _, f := range b.Files.Files() {
		if !slices.Contains(files, f) {
			files = append(files, f)
		}
	}
	db, err := LoadContext(ctx, files...)
	if err != nil {
		return nil, fmt.Errorf("%w (the DBCs of %s, decoded here as one database)", err, strings.Join(b.labels(), ", "))
	}
	if err := b.samePGNs(db); err != nil {
		return nil, err
	}
	return db, nil
}

// labels names each set of files: "IFACE=FILE[,FILE]", "FILE" for All.
func (b *Buses) labels() []string {
	var out []string
	if len(b.Files.All) > 0 {
		out = append(out, strings.Join(b.Files.All, ","))
	}
	for _, name := range b.Files.Names() {
		out = append(out, name+"="+strings.Join(b.Files.Interfaces[name], ","))
	}
	return out
}

// samePGNs checks that a 29-bit frame matched by PGN finds in merged the
// message its own interface's database gives it: two interfaces' J1939
// messages of one PGN cannot share a database.
func (b *Buses) samePGNs(merged *Database) error {
	dbs := slices.Collect(func(yield func(*Database) bool) {
		if b.All != nil && !yield(b.All) {
			return
		}
		for _, name := range b.Files.Names() {
			if !yield(b.Interfaces[name]) {
				return
			}
		}
	})
	for _, db := range dbs {
		for pgn, m := range db.byPGN {
			if got := merged.byPGN[pgn]; got.Name != m.Name || got.File != m.File {
				return fmt.Errorf("%w: PGN %d is %s (%s) and %s (%s): these DBCs cannot be decoded as one database",
					ErrConflict, pgn, m.Name, m.File, got.Name, got.File)
			}
		}
	}
	return nil
}
