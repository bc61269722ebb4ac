package ingest

import (
	"cmp"
	"fmt"
	"math"

	"github.com/yukart/candec/dbc"
	"github.com/yukart/candec/decoder"
	"github.com/yukart/candec/envelope"
	"github.com/yukart/candec/internal/fleet/lake"
)

// DefaultSignalPrefix is where the car publishes each signal, the
// topic template yukart/vehicle/{signal} less the signal: a window's
// items are on these topics.
const DefaultSignalPrefix = "yukart/vehicle/"

// DefaultBus is the bus column of the rows of a DBC given for every
// interface: the window stream does not say which bus a value came on.
const DefaultBus = "can"

// Bus is a DBC and the interface its signals are on.
type Bus struct {
	// Interface is the bus column of its rows; "" is DefaultBus.
	Interface string
	DB        *dbc.Database
}

// sigInfo is what a window item's topic tells: its signal, and how its
// envelope becomes a decoder.Value the lake's Writer takes.
type sigInfo struct {
	s        *dbc.Signal
	bus      string
	labelled bool // the lake writes a _label column: Raw must be set
	float    bool // an IEEE float signal
	integer  bool // the lake's column is INT64
}

// signalTable maps an item's topic to its signal. A name that two
// signals share maps to nil: the car's default template gives them one
// topic, so which of the two a value belongs to is unknown.
type signalTable map[string]*sigInfo

// newSignalTable indexes the signals of buses under prefix.
func newSignalTable(prefix string, buses []Bus) (signalTable, []string, error) {
	t := signalTable{}
	var ambiguous []string
	for _, b := range buses {
		if b.DB == nil {
			return nil, nil, fmt.Errorf("ingest: bus %q has no DBC", b.Interface)
		}
		bus := cmp.Or(b.Interface, DefaultBus)
		for _, s := range b.DB.Signals {
			topic := prefix + s.Name
			if _, dup := t[topic]; dup {
				if t[topic] != nil {
					ambiguous = append(ambiguous, s.Name)
				}
				t[topic] = nil
				continue
			}
			t[topic] = &sigInfo{s: s, bus: bus,
				labelled: len(s.Values) > 0 && s.Type == dbc.Integer && s.Factor != 0,
				float:    s.Type == dbc.Float32 || s.Type == dbc.Float64, integer: lake.IntegerColumn(s)}
		}
	}
	return t, ambiguous, nil
}

// fits reports whether the lake's column of si's signal holds e's value
// as it is: an INT64 column takes an integer of int64 and a float that
// is one (3.0), never an unsigned value past int64, a fraction, a float
// past int64 or a non-finite one. A DOUBLE column takes every value.
func (si *sigInfo) fits(e *envelope.Envelope) bool {
	if !si.integer {
		return true
	}
	switch e.Kind {
	case envelope.Int:
		return true
	case envelope.Uint:
		return e.Uint <= math.MaxInt64
	default:
		// -2^63 is an int64; 2^63, the first float past it, is not.
		return e.Float == math.Trunc(e.Float) && e.Float >= math.MinInt64 && e.Float < math.MaxInt64
	}
}

// value makes e, an envelope of si's signal, the decoder.Value that a
// decode of its frame gave: an integer value is Exact (the car sends an
// integer only for an exact one), a float keeps the car's tidied value
// (tidying it again changes nothing), oor is OutOfRange, and the raw
// value behind a label is worked out from the value so that the lake
// writes the DBC's label. e's value must fit the column (fits): an
// INT64 column's value is then made Exact, with Int set.
func (si *sigInfo) value(e *envelope.Envelope, v *decoder.Value) {
	*v = decoder.Value{Signal: si.s}
	switch {
	case e.Kind == envelope.Int:
		v.Flags, v.Int, v.Phys, v.Raw = decoder.Exact, e.Int, float64(e.Int), uint64(e.Int)
	case e.Kind == envelope.Uint:
		v.Flags, v.Raw, v.Phys = decoder.Exact|decoder.Unsigned, e.Uint, float64(e.Uint)
		if si.integer {
			v.Int = int64(e.Uint)
		}
	case si.integer:
		v.Flags, v.Int, v.Phys = decoder.Exact, int64(e.Float), e.Float
		v.Raw = uint64(v.Int)
	default:
		v.Phys = e.Float
		if si.float {
			v.Flags = decoder.Float
		}
	}
	if e.Flags&envelope.OutOfRange != 0 {
		v.Flags |= decoder.OutOfRange
	}
	if si.labelled && e.Kind != envelope.Uint {
		s := si.s
		raw := math.Round((v.Phys - s.Offset) / s.Factor)
		if e.Kind == envelope.Int && s.Factor == 1 && s.Offset == 0 {
			v.Raw = uint64(e.Int)
		} else if raw >= math.MinInt64 && raw < math.MaxInt64 {
			v.Raw = uint64(int64(raw))
		}
	}
}
