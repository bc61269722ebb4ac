package decoder

import (
	"github.com/yukart/candec/dbc"
	"github.com/yukart/candec/frame"
)

// Selector gives a consumer that decodes with one database (the
// pipeline does) the meaning of a DBC per interface: the database is
// dbc.Buses.Merged's, and Select passes on only the frames that their
// own interface's database decodes, each with the ID of its message in
// the merged database. A frame of an interface without a database is
// counted, never decoded with another interface's. It counts per bus as
// a Router does (see Router). A Selector belongs to one goroutine.
type Selector struct {
	r      *Router
	merged *dbc.Merged
	// single is true when one set of files decodes every interface
	// that has one: the merged database is that set, and a frame of
	// such an interface passes on whatever its ID (the consumer counts
	// the unknown ones, as it does with one database for all).
	single bool
	// What Select left out besides remote and error frames: frames of
	// an interface without a database, of an ID their interface's
	// database does not define (with one set of files, the consumer
	// counts those), and J1939 clashes (see rekey).
	noDatabase, unknown, clashes uint64
}

// NewSelector returns a Selector of the loaded buses b, whose merged
// database (b.Merged) is m.
func NewSelector(b *dbc.Buses, m *dbc.Merged) *Selector {
	r, err := NewRouter(RouterConfig{All: b.All, Interfaces: b.Interfaces})
	if err != nil {
		panic(err) // a Router fails only on a signal glob, and there is none
	}
	_, single := b.Single()
	return &Selector{r: r, merged: m, single: single}
}

// Select counts f and reports whether to pass it on to the merged
// database, having given it the ID of its message there: a frame its
// interface's database knows (with one set of files: any frame of an
// interface that has one). Select allocates nothing.
func (s *Selector) Select(f *frame.Frame, names Namer) bool {
	known := s.r.Select(f, names)
	switch {
	case !s.r.Routed(f.Bus):
		s.noDatabase++
		return false
	case s.single:
		return true
	case !known:
		if f.Flags&(frame.Remote|frame.Error) == 0 {
			s.unknown++
		}
		return false
	}
	return s.rekey(f)
}

// rekey gives f, a frame its interface's database knows, the ID of its
// message's copy in the merged database; false when that database
// would take it for another message (a J1939 frame known by its PGN
// whose own ID is another interface's message there).
func (s *Selector) rekey(f *frame.Frame) bool {
	db := s.r.Database(f.Bus)
	ext := f.Flags&frame.Extended != 0
	m := db.Message(f.ID, ext)
	if m == nil {
		// Known by its PGN: a J1939 message keeps its ID in the merged
		// database, but f's own ID may be another message there.
		all := s.merged.DB
		if all.Message(f.ID, ext) != nil || all.MessageByPGN(dbc.PGN(f.ID)) != s.merged.Of(db.MessageByPGN(dbc.PGN(f.ID))) {
			s.clashes++
			return false
		}
		return true
	}
	f.ID = s.merged.Of(m).ID
	return true
}

// Router returns the Router that counts the frames: Buses, Unseen,
// SharedAll.
func (s *Selector) Router() *Router { return s.r }

// Left returns the counts of the frames Select left out: of an
// interface without a database; of an ID their interface's database
// does not define (none with one set of files: the consumer counts
// those); J1939 frames that the merged database would take for another
// message (see Select).
func (s *Selector) Left() (noDatabase, unknown, clashes uint64) {
	return s.noDatabase, s.unknown, s.clashes
}
