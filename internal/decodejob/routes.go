package decodejob

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/yukart/candec/dbc"
	"github.com/yukart/candec/decoder"
	"github.com/yukart/candec/internal/readfile"
	"github.com/yukart/candec/internal/termtext"
)

// DBCs names the DBC files of a decode: All for every interface, and
// Interfaces[name] for the one interface name of a multi-bus capture.
type DBCs struct {
	All        []string
	Interfaces map[string][]string
}

// Files lists every DBC file named, for the check that the output is
// none of them.
func (d DBCs) Files() []string {
	out := append([]string(nil), d.All...)
	for _, fs := range d.Interfaces {
		out = append(out, fs...)
	}
	return out
}

// Hash identifies the DBC files of d by their contents and by which
// interface each decodes: the lake records it, and refuses to mix two.
func (d DBCs) Hash() (string, error) {
	h := sha256.New()
	add := func(label string, files []string) error {
		fmt.Fprintf(h, "%s\x00%d\x00", label, len(files))
		for _, f := range files {
			b, err := readfile.Read(context.Background(), f, dbc.MaxFileSize)
			if err != nil {
				return fmt.Errorf("decode: %w", err)
			}
			fmt.Fprintf(h, "%d\x00", len(b))
			h.Write(b)
		}
		return nil
	}
	if err := add("*", d.All); err != nil {
		return "", err
	}
	ifaces := make([]string, 0, len(d.Interfaces))
	for k := range d.Interfaces {
		ifaces = append(ifaces, k)
	}
	slices.Sort(ifaces)
	for _, k := range ifaces {
		if err := add(k, d.Interfaces[k]); err != nil {
			return "", err
		}
	}
	return "sha256:" + hex.EncodeToString(h.Sum(nil)), nil
}

// busDecoders is the plain decode's choice of DBC by interface: the
// decoder.Router built from the DBCs and signal globs (which decodes
// and counts), and what its summary names besides the Router's counts.
type busDecoders struct {
	*decoder.Router
	spec    DBCs
	cfg     decoder.RouterConfig // for fresh
	frames  int64                // every frame read
	skipped int                  // malformed lines skipped (SkipInvalid)
}

// newBusDecoders loads every DBC set of spec, each set once, in an
// order that makes the first error the same on every run.
func newBusDecoders(spec DBCs, globs []string) (*busDecoders, error) {
	loaded := map[string]*dbc.Database{}
	load := func(files []string) (*dbc.Database, error) {
		key := strings.Join(files, ",")
		if db, ok := loaded[key]; ok {
			return db, nil
		}
		db, err := dbc.Load(files...)
		if err != nil {
			return nil, err
		}
		loaded[key] = db
		return db, nil
	}
	cfg := decoder.RouterConfig{Interfaces: map[string]*dbc.Database{}, Signals: globs}
	var err error
	if len(spec.All) > 0 {
		if cfg.All, err = load(spec.All); err != nil {
			return nil, err
		}
	}
	ifaces := make([]string, 0, len(spec.Interfaces))
	for name := range spec.Interfaces {
		ifaces = append(ifaces, name)
	}
	slices.Sort(ifaces)
	for _, name := range ifaces {
		if cfg.Interfaces[name], err = load(spec.Interfaces[name]); err != nil {
			return nil, err
		}
	}
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
func (s *busDecoders) summary(w io.Writer, name string, truncated int) {
	writeSummary(w, name, s.spec, decodeCounts{buses: s.Buses(), unseen: s.Unseen(), frames: s.frames, skipped: s.skipped, truncated: truncated})
}

// decodeCounts are what a summary reports: of one capture, or added up
// over many (add).
type decodeCounts struct {
	buses     []decoder.BusStats
	unseen    []string
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
	if first {
		c.unseen = o.unseen
	} else {
		c.unseen = slices.DeleteFunc(c.unseen, func(u string) bool { return !slices.Contains(o.unseen, u) })
	}
	slices.SortStableFunc(c.buses, func(a, b decoder.BusStats) int { return strings.Compare(a.Interface, b.Interface) })
}

func writeSummary(w io.Writer, name string, spec DBCs, c decodeCounts) {
	const p = "candec decode: "
	files := func(iface string) []string {
		if fs, ok := spec.Interfaces[iface]; ok {
			return fs
		}
		return spec.All
	}
	if c.skipped > 0 {
		fmt.Fprintf(w, p+"skipped %d malformed lines\n", c.skipped)
	}
	if c.frames == 0 {
		fmt.Fprintf(w, p+"%s holds no frames\n", termtext.Clean(name))
		return
	}
	// Interface names come from the capture: outside text.
	for i, b := range c.buses {
		b.Interface = termtext.Clean(b.Interface)
		if !b.Routed {
			fmt.Fprintf(w, p+"%s: %d frames not decoded: no --dbc for this interface\n", b.Interface, b.Frames)
			continue
		}
		if b.Unknown > 0 {
			fmt.Fprintf(w, p+"%s: %d of %d frames had IDs not in %s\n", b.Interface, b.Unknown, b.Frames, termtext.Clean(strings.Join(files(c.buses[i].Interface), ",")))
		}
		if r, e := b.Remote, b.ErrorFrames; r+e > 0 {
			fmt.Fprintf(w, p+"%s: %d remote and %d error frames skipped (they carry no signals)\n", b.Interface, r, e)
		}
		if b.Short > 0 {
			fmt.Fprintf(w, p+"%s: %d frames shorter than their message\n", b.Interface, b.Short)
		}
	}
	if c.truncated > 0 {
		fmt.Fprintf(w, p+"%d values left out: their signals do not fit in short frames\n", c.truncated)
	}
	for _, iface := range c.unseen {
		fmt.Fprintf(w, p+"--dbc %s=%s: no frames on %s in %s\n", termtext.Clean(iface), termtext.Clean(strings.Join(spec.Interfaces[iface], ",")), termtext.Clean(iface), termtext.Clean(name))
	}
}
