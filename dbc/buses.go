package dbc

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/yukart/candec/internal/base/readfile"
)

// ErrBusFiles is wrapped by every error of BusFiles.Set: a value that
// does not say which DBC files decode which bus. Its text leaves out the
// package's name: the error is shown after the flag or key that gave
// the value ("--dbc", "dbc"), which says it.
var ErrBusFiles = errors.New("want [IFACE=]FILE[,FILE]")

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
			return "", fmt.Errorf("%w (the DBC of %s)", err, name)
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

// Merged is one Database of the messages of every interface's, for a
// consumer that decodes with one database (the pipeline) while the
// frames are chosen by interface beforehand (decoder.Selector). Two
// interfaces' databases may define one ID as different messages (a
// powertrain bus's 0x224 is not the radar bus's): the later one's copy
// in DB then has an ID that no interface's database uses, and a frame
// of its interface is given that ID before DB decodes it (the Selector
// does). The copies' IDs are therefore DB's own: name a message's ID
// from the interface's database, not from DB.
type Merged struct {
	DB   *Database
	twin map[*Message]*Message // an interface's message → its copy in DB
}

// Of returns the copy in DB of msg, a message of one interface's
// database; msg itself when DB is that database.
func (m *Merged) Of(msg *Message) *Message {
	if m.twin == nil {
		return msg
	}
	return m.twin[msg]
}

// Merged returns one Database of every interface's messages: the one
// set of files when there is one (Single), else copies of every
// database's messages, all buses' J1939 messages keeping their IDs (a
// J1939 ID carries the sender's address): two interfaces' J1939
// messages of one ID or PGN are an error (ErrConflict) naming both.
func (b *Buses) Merged() (*Merged, error) {
	if db, ok := b.Single(); ok {
		return &Merged{DB: db}, nil
	}
	var dbs []*Database
	for _, db := range append([]*Database{b.All}, b.interfaceDBs()...) {
		if db != nil && !slices.Contains(dbs, db) {
			dbs = append(dbs, db)
		}
	}
	used := map[Key]bool{}
	for _, db := range dbs {
		for _, m := range db.Messages {
			used[Key{m.ID, m.Extended}] = true
		}
	}
	out := &Merged{twin: map[*Message]*Message{}}
	var msgs []*Message
	taken := map[Key]*Message{}
	type pgnOwner struct {
		m  *Message
		db *Database
	}
	pgns := map[uint32]pgnOwner{}
	free := freeIDs(used)
	for _, db := range dbs {
		for _, m := range db.Messages {
			k := Key{m.ID, m.Extended}
			if prev := taken[k]; prev != nil {
				if m.J1939 || prev.J1939 {
					return nil, b.clash(prev, m, k.String())
				}
				if k.ID, k.Extended = free(m.Extended); k.ID == noID {
					return nil, fmt.Errorf("%w: no free ID for message %s (%s): these DBCs cannot be decoded as one database", ErrConflict, m.Name, m.File)
				}
			}
			if m.J1939 {
				// One database's J1939 messages of one PGN are its own
				// affair (it keeps the first); two databases' clash.
				if prev, ok := pgns[m.PGN()]; !ok {
					pgns[m.PGN()] = pgnOwner{m, db}
				} else if prev.db != db {
					return nil, b.clash(prev.m, m, "PGN "+strconv.FormatUint(uint64(m.PGN()), 10))
				}
			}
			c := copyMessage(m, k)
			taken[k] = m
			out.twin[m] = c
			msgs = append(msgs, c)
		}
	}
	db, err := NewDatabase(msgs)
	if err != nil {
		return nil, err
	}
	out.DB = db
	return out, nil
}

// interfaceDBs are the databases of the interfaces named, by name.
func (b *Buses) interfaceDBs() []*Database {
	var out []*Database
	for _, name := range b.Files.Names() {
		out = append(out, b.Interfaces[name])
	}
	return out
}

func (b *Buses) clash(prev, m *Message, what string) error {
	return fmt.Errorf("%w: J1939 messages %s (%s) and %s (%s) share %s: a J1939 ID carries its sender, so these DBCs cannot be decoded as one database; give one bus at a time",
		ErrConflict, prev.Name, prev.File, m.Name, m.File, what)
}

// noID is freeIDs's answer when every ID is taken.
const noID = ^uint32(0)

// freeIDs returns a function that gives, at each call, an ID of the
// given format that no key of used has, from the top down, or noID.
func freeIDs(used map[Key]bool) func(extended bool) (uint32, bool) {
	next := map[bool]uint32{false: 0x7FF, true: 0x1FFFFFFF}
	return func(extended bool) (uint32, bool) {
		for id := next[extended]; id != noID; id-- {
			if !used[Key{id, extended}] {
				used[Key{id, extended}] = true
				next[extended] = id - 1
				return id, extended
			}
		}
		return noID, extended
	}
}

// copyMessage copies m with the key k, its signals copied too (their
// Message and Index are the new database's), and their multiplexer
// switches the copies'.
func copyMessage(m *Message, k Key) *Message {
	c := *m
	c.ID, c.Extended = k.ID, k.Extended
	c.Signals = make([]*Signal, len(m.Signals))
	copies := make(map[*Signal]*Signal, len(m.Signals))
	for i, s := range m.Signals {
		sc := *s
		c.Signals[i] = &sc
		copies[s] = &sc
	}
	for _, sc := range c.Signals {
		if sc.Mux != nil {
			sc.Mux = &Mux{Switch: copies[sc.Mux.Switch], Ranges: sc.Mux.Ranges}
		}
	}
	return &c
}
