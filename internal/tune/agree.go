package tune

import (
	"errors"
	"fmt"

	"github.com/yukart/candec/dbc"
)

// ErrDisagree: captures' databases differ, so no one policy fits them.
var ErrDisagree = errors.New("tune: the captures' DBCs disagree")

// Agree returns nil when a and b decode every signal alike: the same
// signals, by message.signal, each in a message of the same ID and
// cycle time, at the same bits, with the same scaling, range, unit and
// value table. Otherwise it names the first difference, with aName and
// bName the databases' names.
func Agree(a, b *dbc.Database, aName, bName string) error {
	sa, sb := signatures(a), signatures(b)
	for name, x := range sa {
		y, ok := sb[name]
		switch {
		case !ok:
			return fmt.Errorf("%w: %s has %s, %s has not", ErrDisagree, aName, name, bName)
		case x != y:
			return fmt.Errorf("%w: %s: %s in %s, %s in %s", ErrDisagree, name, x, aName, y, bName)
		}
	}
	for name := range sb {
		if _, ok := sa[name]; !ok {
			return fmt.Errorf("%w: %s has %s, %s has not", ErrDisagree, bName, name, aName)
		}
	}
	return nil
}

// signatures are what decides how each signal of db is decoded and
// published, by message.signal.
func signatures(db *dbc.Database) map[string]string {
	out := make(map[string]string, len(db.Signals))
	for _, s := range db.Signals {
		m := s.Message
		out[s.FullName()] = fmt.Sprintf("ID %#x (extended %t, cycle %s), bits %d|%d@%d signed %t type %d, (%g,%g) [%g|%g] %q, values %v, multiplexer %t, multiplexed %t",
			m.ID, m.Extended, m.CycleTime, s.Start, s.Length, s.Order, s.Signed, s.Type, s.Factor, s.Offset, s.Min, s.Max, s.Unit, s.Values,
			s.Multiplexer, s.Mux != nil)
	}
	return out
}
