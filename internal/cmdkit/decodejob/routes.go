package decodejob

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/yukart/candec/dbc"
	"github.com/yukart/candec/decoder"
	"github.com/yukart/candec/internal/base/termtext"
)

// busDecoders is the plain decode's choice of DBC by interface: the
// decoder.Router built from the DBCs and signal globs (which decodes
// and counts), and what its summary names besides the Router's counts.
type busDecoders struct {
	*decoder.Router
	spec    dbc.BusFiles
	cfg     decoder.RouterConfig // for fresh
	frames  int64                // every frame read
	skipped int                  // malformed lines skipped (SkipInvalid)
}

// newBusDecoders loads every DBC set of spec (dbc.LoadBuses).
func newBusDecoders(ctx context.Context, spec dbc.BusFiles, globs []string) (*busDecoders, error) {
	b, err := dbc.LoadBuses(ctx, spec)
	if err != nil {
		return nil, err
	}
	cfg := decoder.RouterConfig{All: b.All, Interfaces: b.Interfaces, Signals: globs}
	r, err := decoder.NewRouter(cfg)
	if err != nil {
		return nil, &UsageError{fmt.Errorf("decode: --signals: %w", err)}
	}
	// A glob that matches no signal of any DBC is a typo: refuse it
	// before decoding rather than print nothing for it.
	if u := r.Unmatched(); len(u) > 0 {
		return nil, &UsageError{fmt.Errorf("decode: --signals %q matches no signal in %s", u[0], strings.Join(spec.Files(), ", "))}
	}
	return &busDecoders{Router: r, spec: spec, cfg: cfg}, nil
}

// fresh returns busDecoders of the same DBCs and signals with counts
// of their own, for another capture: a Router names its buses by the
// first capture it reads, so each capture of many gets its own.
func (s *busDecoders) fresh() *busDecoders {
	r, err := decoder.NewRouter(s.cfg)
	if err != nil {
		panic(err) // the same config built s.Router
	}
	return &busDecoders{Router: r, spec: s.spec, cfg: s.cfg}
}

// summary writes to w one line for each thing a user may not expect
// from the output alone: an empty capture, an IFACE= interface that
// sent nothing, interfaces without a DBC, unknown IDs, remote and error
// frames, values missing from short frames, skipped lines. A clean
// decode writes nothing.
func (s *busDecoders) summary(w io.Writer, name string, truncated int) error {
	return writeSummary(w, name, s.spec, s.counts(truncated))
}

// counts are what the summary of s reports.
func (s *busDecoders) counts(truncated int) decodeCounts {
	return decodeCounts{buses: s.Buses(), unseen: s.Unseen(), shared: s.SharedAll(), frames: s.frames, skipped: s.skipped, truncated: truncated}
}

// decodeCounts are what a summary reports: of one capture, or added up
// over many (add).
type decodeCounts struct {
	buses     []decoder.BusStats
	unseen    []string
	shared    []string // interfaces the DBC for every interface decoded
	frames    int64
	skipped   int
	truncated int
}

// add adds the counts of another capture, bus by interface name; an
// interface is unseen when no capture had it.
func (c *decodeCounts) add(o decodeCounts, first bool) {
	c.frames += o.frames
	c.skipped += o.skipped
	c.truncated += o.truncated
	for _, b := range o.buses {
		i := slices.IndexFunc(c.buses, func(x decoder.BusStats) bool { return x.Interface == b.Interface })
		if i < 0 {
			c.buses = append(c.buses, b)
			continue
		}
		x := &c.buses[i]
		x.Frames += b.Frames
		x.Unknown += b.Unknown
		x.Remote += b.Remote
		x.ErrorFrames += b.ErrorFrames
		x.Short += b.Short
	}
	for _, iface := range o.shared {
		if !slices.Contains(c.shared, iface) {
			c.shared = append(c.shared, iface)
		}
	}
	if first {
		c.unseen = o.unseen
	} else {
		c.unseen = slices.DeleteFunc(c.unseen, func(u string) bool { return !slices.Contains(o.unseen, u) })
	}
	slices.SortStableFunc(c.buses, func(a, b decoder.BusStats) int { return strings.Compare(a.Interface, b.Interface) })
}

// writeSummary writes the summary of c and returns the error of an
// IFACE= that names no interface of the capture(s).
func writeSummary(w io.Writer, name string, spec dbc.BusFiles, c decodeCounts) error {
	const p = "candec decode: "
	if c.skipped > 0 {
		fmt.Fprintf(w, p+"skipped %d malformed lines\n", c.skipped)
	}
	if c.frames == 0 {
		fmt.Fprintf(w, p+"%s holds no frames\n", termtext.Clean(name))
		return unseenError("decode", name, spec, c.unseen, nil)
	}
	// Interface names come from the capture: outside text.
	for _, b := range c.buses {
		if !b.Routed {
			writeNotRouted(w, p, b)
			continue
		}
		iface := termtext.Clean(b.Interface)
		if b.Unknown > 0 {
			fmt.Fprintf(w, p+"%s: %d of %d frames had IDs not in %s\n", iface, b.Unknown, b.Frames, termtext.Clean(strings.Join(spec.Of(b.Interface), ",")))
		}
		if r, e := b.Remote, b.ErrorFrames; r+e > 0 {
			fmt.Fprintf(w, p+"%s: %d remote and %d error frames skipped (they carry no signals)\n", iface, r, e)
		}
		if b.Short > 0 {
			fmt.Fprintf(w, p+"%s: %d frames shorter than their message\n", iface, b.Short)
		}
	}
	if c.truncated > 0 {
		fmt.Fprintf(w, p+"%d values left out: their signals do not fit in short frames\n", c.truncated)
	}
	writeShared(w, p, spec, c.shared)
	return unseenError("decode", name, spec, c.unseen, c.buses)
}

// writeNotRouted says that the frames of b were not decoded, its
// interface having no DBC: with --dbc IFACE=FILE, no other interface's
// DBC stands in.
func writeNotRouted(w io.Writer, p string, b decoder.BusStats) {
	fmt.Fprintf(w, p+"%s: %d frames not decoded: no --dbc for this interface\n", termtext.Clean(b.Interface), b.Frames)
}

// writeShared warns, once, that the DBC given for every interface
// decoded frames of several (shared, from decoder.Router.SharedAll):
// most likely one bus's DBC read as another's.
func writeShared(w io.Writer, p string, spec dbc.BusFiles, shared []string) {
	if len(shared) < 2 {
		return
	}
	ifaces := make([]string, len(shared))
	for i, s := range shared {
		ifaces[i] = termtext.Clean(s)
	}
	fmt.Fprintf(w, p+"warning: --dbc %s, given for every interface, decoded frames of %d: %s; one bus's DBC decodes another's IDs as the wrong messages: give each its own with --dbc IFACE=FILE (%s=…)\n",
		termtext.Clean(strings.Join(spec.All, ",")), len(ifaces), strings.Join(ifaces, ", "), ifaces[0])
}

// unseenError is the error of the interfaces named by --dbc IFACE=FILE
// (unseen, from decoder.Router.Unseen) that had no frame in the
// capture name, whose interfaces were buses: a misspelt interface, or
// the capture of another car. The capture's interfaces are known only
// at its end, so the output is written by then (and kept); the command
// still fails.
func unseenError(cmd, name string, spec dbc.BusFiles, unseen []string, buses []decoder.BusStats) error {
	if len(unseen) == 0 {
		return nil
	}
	has := "it has none"
	if len(buses) > 0 {
		names := make([]string, len(buses))
		for i, b := range buses {
			names[i] = termtext.Clean(b.Interface)
		}
		has = "its interfaces are " + strings.Join(names, ", ")
	}
	iface := unseen[0]
	return &UsageError{fmt.Errorf("%s: --dbc %s=%s: no interface %s in %s (%s)", cmd, termtext.Clean(iface),
		termtext.Clean(strings.Join(spec.Interfaces[iface], ",")), termtext.Clean(iface), termtext.Clean(name), has)}
}
