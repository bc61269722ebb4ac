package decodejob

import (
	"context"
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
// on only the frames that their own interface's DBC decodes. A frame of
// an interface without a DBC is counted, never decoded with another
// interface's; Finish reports the counts.
type Selector struct {
	// DB decodes every frame Source passes on.
	DB    *dbc.Database
	buses *dbc.Buses
	// single is true when one set of files decodes every interface
	// that has one: DB is that set, and a frame of such an interface
	// passes on whatever its ID (the consumer counts the unknown ones,
	// as it does without IFACE=).
	single bool
}

// NewSelector builds the Selector of the loaded buses b: an error when
// the interfaces' DBCs cannot be one database (one ID defined two ways).
func NewSelector(ctx context.Context, b *dbc.Buses) (*Selector, error) {
	db, err := b.Merged(ctx)
	if err != nil {
		return nil, err
	}
	_, single := b.Single()
	return &Selector{DB: db, buses: b, single: single}, nil
}

// Selected is a capture read through a Selector. It belongs to one
// goroutine, as its capture does.
type Selected struct {
	capture.Source
	s *Selector
	r *decoder.Router
}

// Source returns src read through s, with counts of its own.
func (s *Selector) Source(src capture.Source) *Selected {
	r, err := decoder.NewRouter(decoder.RouterConfig{All: s.buses.All, Interfaces: s.buses.Interfaces})
	if err != nil {
		panic(err) // a Router fails only on a signal glob, and there is none
	}
	return &Selected{Source: src, s: s, r: r}
}

// Next returns the next frame that the DBC of its interface decodes
// (with one set of files for every interface that has one: the next
// frame of such an interface).
func (c *Selected) Next(f *frame.Frame) error {
	for {
		if err := c.Source.Next(f); err != nil {
			return err
		}
		known := c.r.Select(f, c.Source)
		if known || c.s.single && c.r.Routed(f.Bus) {
			return nil
		}
	}
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
	writeShared(w, prefix, c.s.buses.Files, c.r.SharedAll())
	return unseenError(cmd, name, c.s.buses.Files, c.r.Unseen(), buses)
}
