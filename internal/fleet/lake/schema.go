package lake

import (
	"math"
	"path"
	"reflect"
	"unsafe"

	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/compress"
	"github.com/parquet-go/parquet-go/compress/zstd"

	"github.com/yukart/candec/dbc"
)

// ordered is a group node whose columns keep the order they are given
// in: parquet.Group sorts them by name, which would put a message's
// signals out of their DBC order and "time" after "bus".
type ordered struct {
	parquet.Group
	fields []parquet.Field
}

func (o *ordered) Fields() []parquet.Field { return o.fields }

type field struct {
	parquet.Node
	name string
}

func (f *field) Name() string                           { return f.name }
func (f *field) Value(base reflect.Value) reflect.Value { return reflect.Value{} }

// column is one column of a schema being built: its name and node.
type column struct {
	name string
	node parquet.Node
}

func newSchema(name string, cols []column) *parquet.Schema {
	g := &ordered{Group: parquet.Group{}}
	for _, c := range cols {
		g.Group[c.name] = c.node
		g.fields = append(g.fields, &field{Node: c.node, name: c.name})
	}
	return parquet.NewSchema(name, g)
}

// PolicyColumn names the column of a row's policy version
// (Config.PolicyColumn).
const PolicyColumn = "policy_version"

// Column nodes. Strings are dictionary-encoded: a column of names,
// units and labels holds a few distinct values many times over.
var (
	timeNode   = parquet.Timestamp(parquet.Nanosecond)
	int64Node  = parquet.Leaf(parquet.Int64Type)
	int32Node  = parquet.Leaf(parquet.Int32Type)
	doubleNode = parquet.Leaf(parquet.DoubleType)
	boolNode   = parquet.Leaf(parquet.BooleanType)
	stringNode = parquet.Encoded(parquet.String(), &parquet.RLEDictionary)
	// oorNode is a lake table's oor column: an optional list of
	// strings, the standard three-level LIST (oor.list.element).
	oorNode = parquet.Optional(parquet.List(stringNode))
)

// codec compresses every column: zstd at its fastest level compresses
// CAN signals (slowly changing numbers) about as well as its default
// level, at a fraction of the time.
var codec compress.Codec = &zstd.Codec{Level: zstd.SpeedFastest, Concurrency: 1}

// MinTime and MaxTime bound the times a lake row may have (ns since the
// Unix epoch, MinTime <= t < MaxTime): 1677-09-22T00:00:00Z to
// 2262-04-11T00:00:00Z, the whole days that the time column's type,
// INT64 TIMESTAMP(NANOS), holds. Left out are the part days at either
// end, where the readers' own marks lie: the lowest int64 is NaT (no
// time) to pandas and NumPy, and DuckDB keeps its highest and lowest
// values for infinity. Within the bounds every time is a time to every
// reader, and its date partition a whole day.
const (
	MinTime = -106751 * dayNanos
	MaxTime = 106751 * dayNanos
)

// IntegerColumn reports whether the lake writes signal s as an int64
// column: an integer signal (not IEEE float) whose factor and offset are
// integers and whose every raw value, scaled, fits in int64. Every value
// of such a signal is an exact integer (decoder.Exact). Any other signal
// is a float64 column.
func IntegerColumn(s *dbc.Signal) bool {
	if s.Type != dbc.Integer || s.Factor != math.Trunc(s.Factor) || s.Offset != math.Trunc(s.Offset) {
		return false
	}
	if s.Length < 1 || s.Length > 64 {
		return false
	}
	var lo, hi float64 // the raw range
	if s.Signed {
		lo, hi = -math.Ldexp(1, s.Length-1), math.Ldexp(1, s.Length-1)-1
	} else {
		lo, hi = 0, math.Ldexp(1, s.Length)-1
	}
	a, b := lo*s.Factor+s.Offset, hi*s.Factor+s.Offset
	// 2^63 is the first float64 beyond int64; staying within 2^62 keeps
	// the float arithmetic above from rounding a value over the edge.
	const limit = 1 << 62
	return math.Abs(a) <= limit && math.Abs(b) <= limit
}

// bytesOf returns the bytes of s without copying: the strings the
// writers pass to parquet are names, units and labels of a loaded DBC,
// which live as long as the program, and interface names, which live as
// long as their source.
func bytesOf(s string) []byte {
	return unsafe.Slice(unsafe.StringData(s), len(s))
}

// matches reports whether s is selected by globs (every signal when
// there are none), by the rule of decoder.RouterConfig.Signals.
func matches(globs []string, s *dbc.Signal) bool {
	if len(globs) == 0 {
		return true
	}
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
