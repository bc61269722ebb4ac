package ingest

import (
	"github.com/yukart/candec/dbc"
	"github.com/yukart/candec/decoder"
	"github.com/yukart/candec/envelope"
	"github.com/yukart/candec/frame"
)

// row is one row of a message's table: the values of one frame.
type row struct {
	si   *sigInfo // its first value's: the message and the bus
	ts   int64
	vals []decoder.Value
}

// has reports whether r holds a value of s.
func (r *row) has(s *dbc.Signal) bool {
	for i := range r.vals {
		if r.vals[i].Signal == s {
			return true
		}
	}
	return false
}

// grouper makes a window's rows: the envelopes of one message with the
// same ts make one row, the frame they were decoded from. A value of a
// signal that its row has already (a heartbeat of the same frame in the
// same window) starts a row of its own, so that no value is lost. The
// rows and their value slices are reused from window to window.
type grouper struct {
	rows []row
	n    int
}

func (g *grouper) reset() { g.n = 0 }

// rowsBack is how far back add looks for a value's row: a car's window
// has ten or twenty rows, and a hostile one of a million items must not
// cost a million squared. A value whose row is further back starts one.
const rowsBack = 64

// add puts the value of si's envelope e in its row.
func (g *grouper) add(si *sigInfo, e *envelope.Envelope) {
	m := si.s.Message
	for i := g.n - 1; i >= max(0, g.n-rowsBack); i-- {
		r := &g.rows[i]
		if r.ts != e.TS || r.si.s.Message != m || r.si.bus != si.bus {
			continue
		}
		if !r.has(si.s) {
			r.vals = append(r.vals, decoder.Value{})
			si.value(e, &r.vals[len(r.vals)-1])
			return
		}
		break
	}
	if g.n == len(g.rows) {
		g.rows = append(g.rows, row{})
	}
	r := &g.rows[g.n]
	g.n++
	r.si, r.ts, r.vals = si, e.TS, r.vals[:0]
	r.vals = append(r.vals, decoder.Value{})
	si.value(e, &r.vals[0])
}

// tableWriter is what the ingest needs of a lake.Writer.
type tableWriter interface {
	Write(f *frame.Frame, iface string, vals []decoder.Value) error
	// SetPolicyVersion sets the policy version of the rows written
	// next: their window's (envelope.Window.Policy).
	SetPolicyVersion(version uint64)
	Commit(input string) error
	Abort()
	Committed() []string
	// Buffered is the memory of the rows not yet committed; DropIdle
	// frees what the writer keeps from a commit for the next.
	Buffered() int64
	DropIdle()
}

// fileKey is one file a commit makes: a vehicle's table of a message on
// a bus and a day.
type fileKey struct {
	msg *dbc.Message
	bus string
	day int64
}
