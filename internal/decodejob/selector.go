package decodejob

import (
	"fmt"
	"io"
	"strings"

	"github.com/yukart/candec/capture"
	"github.com/yukart/candec/dbc"
	"github.com/yukart/candec/decoder"
	"github.com/yukart/candec/frame"
	"github.com/yukart/candec/internal/termtext"
)

// Selector gives the commands that decode with one database (decode
// --policy, tune, plot: the pipeline decodes so) the meaning of --dbc
// IFACE=FILE that decode's Router has: DB holds every interface's
// messages (dbc.Buses.Merged), and a capture read through Source passes
// on only the frames that their own interface's DBC decodes, each with
// the ID of its message in DB. A frame of an interface without a DBC is
// counted, never decoded with another interface's; Finish reports the
// counts.
type Selector struct {
	// DB decodes every frame Source passes on.
	DB     *dbc.Database
	buses  *dbc.Buses
	merged *dbc.Merged
	// single is true when one set of files decodes every interface
	// that has one: DB is that set, and a frame of such an interface
	// passes on whatever its ID (the consumer counts the unknown ones,
	// as it does without IFACE=).
	single bool
}

// NewSelector builds the Selector of the loaded buses b: an error when
// the interfaces' DBCs cannot be one database (dbc.Buses.Merged).
func NewSelector(b *dbc.Buses) (*Selector, error) {
	m, err := b.Merged()
	if err != nil {
		return nil, err
	}
	_, single := b.Single()
	return &Selector{DB: m.DB, buses: b, merged: m, single: single}, nil
}

// Selected is a capture read through a Selector. It belongs to one
// goroutine, as its capture does.
type Selected struct {
	capture.Source
	s *Selector
	r *decoder.Router
	// clashes counts the frames an interface's DBC knows by their PGN
	// (J1939) whose ID is another interface's message in DB: left out.
	clashes uint64
}

// Source returns src read through s, with counts of its own.
func (s *Selector) Source(src capture.Source) *Selected {
	r, err := decoder.NewRouter(decoder.RouterConfig{All: s.buses.All, Interfaces: s.buses.Interfaces})
	if err != nil {
		panic(err) // a Router fails only on a signal glob, and there is none
	}
	return &Selected{Source: src, s: s, r: r}
}

// Next returns the next frame that the DBC of its interface decodes,
// with the ID of its message in DB (with one set of files for every
// interface that has one: the next frame of such an interface, as it
// is).
func (c *Selected) Next(f *frame.Frame) error {
	for {
		if err := c.Source.Next(f); err != nil {
			return err
		}
		known := c.r.Select(f, c.Source)
		if c.s.single {
			if known || c.r.Routed(f.Bus) {
				return nil
			}
			continue
		}
		if known && c.rekey(f) {
			return nil
		}
	}
}

// rekey gives f, a frame its interface's database knows, the ID of its
// message's copy in DB; false when DB would take it for another
// message (a J1939 frame known by its PGN whose ID is another
// interface's message).
func (c *Selected) rekey(f *frame.Frame) bool {
	db := c.r.Database(f.Bus)
	ext := f.Flags&frame.Extended != 0
	m := db.Message(f.ID, ext)
	if m == nil {
		// Known by its PGN: a J1939 message keeps its ID in DB, but
		// f's own ID may be another message there.
		m = db.MessageByPGN(dbc.PGN(f.ID))
		if c.s.DB.Message(f.ID, ext) != nil || c.s.DB.MessageByPGN(dbc.PGN(f.ID)) != c.s.merged.Of(m) {
			c.clashes++
			return false
		}
		return true
	}
	twin := c.s.merged.Of(m)
	f.ID = twin.ID
	return true
}

// Finish writes to w, each line starting with prefix ("candec tune: "),
// the interfaces whose frames were not decoded for want of a DBC, the
// frames left out for an ID their interface's DBC does not define (with
// one set of files, the consumer counts those), and the warning of a
// DBC for every interface that decoded frames of several; it returns
// the error of an IFACE= that named no interface of the capture name.
// cmd names the command in the error.
func (c *Selected) Finish(w io.Writer, cmd, prefix, name string) error {
	buses := c.r.Buses()
	for _, b := range buses {
		switch {
		case !b.Routed:
			writeNotRouted(w, prefix, b)
		case b.Unknown > 0 && !c.s.single:
			fmt.Fprintf(w, prefix+"%s: %d of %d frames left out: IDs not in %s\n", termtext.Clean(b.Interface), b.Unknown, b.Frames,
				termtext.Clean(strings.Join(c.s.buses.Files.Of(b.Interface), ",")))
		}
	}
	if c.clashes > 0 {
		fmt.Fprintf(w, prefix+"%d J1939 frames left out: their ID is another interface's message\n", c.clashes)
	}
	writeShared(w, prefix, c.s.buses.Files, c.r.SharedAll())
	return unseenError(cmd, name, c.s.buses.Files, c.r.Unseen(), buses)
}
