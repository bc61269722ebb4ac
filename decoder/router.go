package decoder

import (
	"errors"
	"fmt"
	"path"
	"slices"

	"github.com/yukart/candec/dbc"
	"github.com/yukart/candec/frame"
)

// ErrGlob is wrapped by NewRouter's error for a malformed
// RouterConfig.Signals glob.
var ErrGlob = errors.New("decoder: bad signal glob")

// Namer names the interfaces of a frame stream by bus index, as
// capture.Source does.
type Namer interface {
	Interface(bus uint8) string
}

// RouterConfig says which database decodes the frames of which
// interface. The caller loads the databases: one *dbc.Database given for
// several interfaces is decoded by one Decoder.
type RouterConfig struct {
	// All decodes the frames of every interface Interfaces does not
	// name; nil leaves them undecoded (counted, see BusStats.Routed).
	All *dbc.Database
	// Interfaces maps an interface name ("can1") to the database of its
	// frames, in place of All; a nil database leaves that interface's
	// frames undecoded.
	Interfaces map[string]*dbc.Database
	// Signals, if not empty, keeps only the values of the signals whose
	// name or "message.signal" (dbc.Signal.FullName) matches one of
	// these globs (path.Match syntax).
	Signals []string
}

// BusStats are what a Router counted on one bus.
type BusStats struct {
	// Bus is the bus index and Interface its name, as the Namer gave it
	// at the bus's first frame.
	Bus       uint8
	Interface string
	// Routed is true when the interface had a database; the frames of
	// one without were counted and not decoded.
	Routed bool
	// Frames counts every frame of the bus; Unknown those whose ID is
	// not in the database; Remote and ErrorFrames the remote and error
	// frames (skipped: they carry no signals); Short the frames shorter
	// than their message.
	Frames, Unknown, Remote, ErrorFrames, Short uint64
}

// Router decodes the frames of a stream of several buses, each with the
// database of its interface, keeps the selected signals, and counts per
// bus what a summary reports. It belongs to one goroutine.
type Router struct {
	cfg      RouterConfig
	all      *route
	byName   map[string]*route
	routes   map[*dbc.Database]*route
	resolved [256]bool
	byBus    [256]*route
	stats    [256]BusStats
}

// route is one database's decoder, its buffer and its signal filter.
type route struct {
	db   *dbc.Database
	dec  *Decoder
	keep []bool // by signal index; nil keeps all
	buf  []Value
}

// NewRouter compiles a Decoder for each database of cfg. It fails only
// on a malformed glob in cfg.Signals (wrapping ErrGlob).
func NewRouter(cfg RouterConfig) (*Router, error) {
	for _, g := range cfg.Signals {
		if _, err := path.Match(g, ""); err != nil {
			return nil, fmt.Errorf("%w %q: %w", ErrGlob, g, err)
		}
	}
	r := &Router{cfg: cfg, byName: map[string]*route{}, routes: map[*dbc.Database]*route{}}
	if cfg.All != nil {
		r.all = r.route(cfg.All)
	}
	for name, db := range cfg.Interfaces {
		if db != nil {
			r.byName[name] = r.route(db)
		}
	}
	return r, nil
}

func (r *Router) route(db *dbc.Database) *route {
	if rt, ok := r.routes[db]; ok {
		return rt
	}
	rt := &route{db: db, dec: New(db)}
	rt.buf = make([]Value, 0, rt.dec.MaxSignals())
	if len(r.cfg.Signals) > 0 {
		rt.keep = make([]bool, len(db.Signals))
		for _, s := range db.Signals {
			rt.keep[s.Index] = matchAny(r.cfg.Signals, s)
		}
	}
	r.routes[db] = rt
	return rt
}

func matchAny(globs []string, s *dbc.Signal) bool {
	for _, g := range globs {
		if ok, _ := path.Match(g, s.Name); ok {
			return true
		}
		if ok, _ := path.Match(g, s.FullName()); ok {
			return true
		}
	}
	return false
}

// Unmatched returns the globs of RouterConfig.Signals that match no
// signal of any database, in their order: most likely typos, which
// would silently select nothing.
func (r *Router) Unmatched() []string {
	var out []string
	for _, g := range r.cfg.Signals {
		found := false
		for db := range r.routes {
			if slices.ContainsFunc(db.Signals, func(s *dbc.Signal) bool { return matchAny([]string{g}, s) }) {
				found = true
				break
			}
		}
		if !found {
			out = append(out, g)
		}
	}
	return out
}

// resolve chooses the route of f's bus, at the bus's first frame (the
// caller checks r.resolved: the check stays in its loop).
func (r *Router) resolve(f *frame.Frame, names Namer) {
	st := &r.stats[f.Bus]
	r.resolved[f.Bus] = true
	st.Bus, st.Interface = f.Bus, names.Interface(f.Bus)
	r.byBus[f.Bus] = r.all
	if _, named := r.cfg.Interfaces[st.Interface]; named {
		r.byBus[f.Bus] = r.byName[st.Interface]
	}
	st.Routed = r.byBus[f.Bus] != nil
}

// Select counts f as Decode does and reports whether the database of
// its interface has its message, without decoding it: for a consumer
// that decodes with one database of every interface's messages
// (dbc.Buses.Merged), which must see only the frames that their own
// interface's database decodes. Select allocates nothing.
func (r *Router) Select(f *frame.Frame, names Namer) bool {
	if !r.resolved[f.Bus] {
		r.resolve(f, names)
	}
	st := &r.stats[f.Bus]
	st.Frames++
	switch {
	case f.Flags&frame.Remote != 0:
		st.Remote++
		return false
	case f.Flags&frame.Error != 0:
		st.ErrorFrames++
		return false
	}
	rt := r.byBus[f.Bus]
	if rt == nil {
		return false
	}
	p := rt.dec.find(f)
	if p == nil {
		st.Unknown++
		return false
	}
	if min(int(f.Len), frameMax) < p.length {
		st.Short++
	}
	return true
}

// Routed reports whether the interface of bus has a database; false
// before the bus's first frame.
func (r *Router) Routed(bus uint8) bool { return r.byBus[bus] != nil }

// Database returns the database of the interface of bus, nil when it
// has none or before the bus's first frame.
func (r *Router) Database(bus uint8) *dbc.Database {
	if rt := r.byBus[bus]; rt != nil {
		return rt.db
	}
	return nil
}

// SharedAll returns the interfaces, in bus order, on which
// RouterConfig.All knew the ID of some frame, when they are two or
// more; nil otherwise. One database that knows frames of several buses
// is most likely a mistake (a powertrain DBC decoding the radar bus,
// whose IDs mean other messages there): a command says so.
func (r *Router) SharedAll() []string {
	if r.all == nil {
		return nil
	}
	shared := func(b *BusStats) bool {
		return b.Frames > b.Unknown+b.Remote+b.ErrorFrames && r.byBus[b.Bus] == r.all
	}
	n := 0
	for i := range r.stats {
		if shared(&r.stats[i]) {
			n++
		}
	}
	if n < 2 {
		return nil // without allocating: a service asks at every batch
	}
	out := make([]string, 0, n)
	for i := range r.stats {
		if shared(&r.stats[i]) {
			out = append(out, r.stats[i].Interface)
		}
	}
	return out
}

// Decode decodes f with the database of its interface, which names
// gives (asked once per bus, at its first frame), and returns the
// selected values. ok is false when the interface has no database, f is
// a remote or error frame, or its ID is not in the database; each is
// counted. The values are valid until the next Decode. Decode allocates
// nothing.
func (r *Router) Decode(f *frame.Frame, names Namer) (vals []Value, ok bool) {
	st := &r.stats[f.Bus]
	if !r.resolved[f.Bus] {
		// resolve, written out: calling it costs Decode about 4 %
		// (BenchmarkRouterDecode8Signals), even when not taken.
		r.resolved[f.Bus] = true
		st.Bus, st.Interface = f.Bus, names.Interface(f.Bus)
		r.byBus[f.Bus] = r.all
		if _, named := r.cfg.Interfaces[st.Interface]; named {
			r.byBus[f.Bus] = r.byName[st.Interface]
		}
		st.Routed = r.byBus[f.Bus] != nil
	}
	st.Frames++
	switch {
	case f.Flags&frame.Remote != 0:
		st.Remote++
		return nil, false
	case f.Flags&frame.Error != 0:
		st.ErrorFrames++
		return nil, false
	}
	rt := r.byBus[f.Bus]
	if rt == nil {
		return nil, false
	}
	short := rt.dec.Stats.Short
	msg, vals := rt.dec.Decode(f, rt.buf[:0])
	if msg == nil {
		st.Unknown++
		return nil, false
	}
	// The decoder may be shared with other buses: count the difference.
	st.Short += rt.dec.Stats.Short - short
	if rt.keep != nil {
		n := 0
		for _, v := range vals {
			if rt.keep[v.Signal.Index] {
				vals[n] = v
				n++
			}
		}
		vals = vals[:n]
	}
	return vals, true
}

// Buses returns the counts of every bus that had a frame, in bus order.
func (r *Router) Buses() []BusStats {
	var out []BusStats
	for i := range r.stats {
		if r.stats[i].Frames > 0 {
			out = append(out, r.stats[i])
		}
	}
	return out
}

// Unseen returns, sorted, the names of RouterConfig.Interfaces on which
// no frame came: a misspelt interface, or a capture of other buses.
func (r *Router) Unseen() []string {
	seen := map[string]bool{}
	for _, b := range r.Buses() {
		seen[b.Interface] = true
	}
	var out []string
	for name := range r.cfg.Interfaces {
		if !seen[name] {
			out = append(out, name)
		}
	}
	slices.Sort(out)
	return out
}
