package decodejob

import (
	"fmt"
	"io"
	"strings"

	"github.com/yukart/candec/capture"
	"github.com/yukart/candec/dbc"
	"github.com/yukart/candec/decoder"
	"github.com/yukart/candec/frame"
	"github.com/yukart/candec/internal/base/termtext"
)

// Selector reads the captures of the commands that decode with one
// database (decode --policy, tune, plot: the pipeline decodes so)
// through a decoder.Selector each, so that --dbc IFACE=FILE means for
// them what it means for decode: DB holds every interface's messages
// (dbc.Buses.Merged), and a capture read through Source passes on only
// the frames that their own interface's DBC decodes.
type Selector struct {
	// DB decodes every frame Source passes on.
	DB     *dbc.Database
	buses  *dbc.Buses
	merged *dbc.Merged
}

// NewSelector builds the Selector of the loaded buses b: an error when
// the interfaces' DBCs cannot be one database (dbc.Buses.Merged).
func NewSelector(b *dbc.Buses) (*Selector, error) {
	m, err := b.Merged()
	if err != nil {
		return nil, err
	}
	return &Selector{DB: m.DB, buses: b, merged: m}, nil
}

// Selected is a capture read through a Selector. It belongs to one
// goroutine, as its capture does.
type Selected struct {
	capture.Source
	s   *Selector
	sel *decoder.Selector
}

// Source returns src read through s, with counts of its own.
func (s *Selector) Source(src capture.Source) *Selected {
	return &Selected{Source: src, s: s, sel: decoder.NewSelector(s.buses, s.merged)}
}

// Next returns the next frame that decoder.Selector passes on.
func (c *Selected) Next(f *frame.Frame) error {
	for {
		if err := c.Source.Next(f); err != nil {
			return err
		}
		if c.sel.Select(f, c.Source) {
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
	r := c.sel.Router()
	_, single := c.s.buses.Single()
	buses := r.Buses()
	for _, b := range buses {
		switch {
		case !b.Routed:
			writeNotRouted(w, prefix, b)
		case b.Unknown > 0 && !single:
			fmt.Fprintf(w, prefix+"%s: %d of %d frames left out: IDs not in %s\n", termtext.Clean(b.Interface), b.Unknown, b.Frames,
				termtext.Clean(strings.Join(c.s.buses.Files.Of(b.Interface), ",")))
		}
	}
	if _, _, n := c.sel.Left(); n > 0 {
		fmt.Fprintf(w, prefix+"%d J1939 frames left out: their ID is another interface's message\n", n)
	}
	writeShared(w, prefix, c.s.buses.Files, r.SharedAll())
	return unseenError(cmd, name, c.s.buses.Files, r.Unseen(), buses)
}
