package lake

import (
	"github.com/parquet-go/parquet-go"
)

// The writers keep the rows of a row group in plain typed slices, one
// per column, and turn a column into parquet values only when the row
// group is written: appending a decoded value is then a store, without
// allocation and without parquet's per-value bookkeeping.

// vec is a column of int64, float64 or string, nullable when valid is
// kept.
type vec[T any] struct {
	v     []T
	valid []bool // nil for a required column
}

// lists is a column of lists of strings, null where a row's list is
// empty: the strings of row i are v[end[i-1]:end[i]].
type lists struct {
	v   []string
	end []int32
}

// values turns buffered columns into the parquet values of a column,
// reusing its buffer.
type values struct{ buf []parquet.Value }

func (p *values) reset(n int) []parquet.Value {
	if cap(p.buf) < n {
		p.buf = make([]parquet.Value, 0, n)
	}
	return p.buf[:0]
}

// put appends v with its definition level and column index, setting
// the levels in place.
func put(out []parquet.Value, v parquet.Value, def, col int) []parquet.Value {
	v.SetDefinitionLevel(def)
	v.SetColumnIndex(col)
	return append(out, v)
}

func level(v parquet.Value, valid []bool, i, col int) parquet.Value {
	switch {
	case valid == nil:
	case !valid[i]:
		v = parquet.Value{}
	default:
		v.SetDefinitionLevel(1)
	}
	v.SetColumnIndex(col)
	return v
}

// of turns c into the parquet values of column col, each made by value.
func of[T any](p *values, c *vec[T], col int, value func(T) parquet.Value) []parquet.Value {
	out := p.reset(len(c.v))
	for i, x := range c.v {
		out = append(out, level(value(x), c.valid, i, col))
	}
	p.buf = out
	return out
}

// int32Value is the INT32 value of x.
func int32Value(x int64) parquet.Value { return parquet.Int32Value(int32(x)) }

// stringValue is the BYTE_ARRAY value of s, sharing its bytes.
func stringValue(s string) parquet.Value { return parquet.ByteArrayValue(bytesOf(s)) }

// lists gives a row with no string one null value, and a row with
// some a value per string, the first starting the row (repetition level
// 0), each at the definition level of a present element (2: the
// optional list and its repeated group).
func (p *values) lists(c *lists, col int) []parquet.Value {
	out := p.reset(len(c.end) + len(c.v))
	start := int32(0)
	for _, end := range c.end {
		if end == start {
			out = put(out, parquet.Value{}, 0, col)
			continue
		}
		for i := start; i < end; i++ {
			v := parquet.ByteArrayValue(bytesOf(c.v[i]))
			if i > start {
				v.SetRepetitionLevel(1)
			}
			out = put(out, v, 2, col)
		}
		start = end
	}
	p.buf = out
	return out
}

// writeColumn writes one column of a row group.
func writeColumn(w *parquet.Writer, col int, vals []parquet.Value) error {
	_, err := w.ColumnWriters()[col].WriteRowValues(vals)
	return err
}
