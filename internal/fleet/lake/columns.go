package lake

import (
	"github.com/parquet-go/parquet-go"
)

// The writers keep the rows of a row group in plain typed slices, one
// per column, and turn a column into parquet values only when the row
// group is written: appending a decoded value is then a store, without
// allocation and without parquet's per-value bookkeeping.

// int64s is a column of int64 (nullable when valid is kept).
type int64s struct {
	v     []int64
	valid []bool // nil for a required column
}

// float64s is a column of float64, nullable.
type float64s struct {
	v     []float64
	valid []bool
}

// strs is a column of strings, nullable when valid is kept.
type strs struct {
	v     []string
	valid []bool
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

func (p *values) int64s(c *int64s, col int) []parquet.Value {
	out := p.reset(len(c.v))
	for i, x := range c.v {
		out = append(out, level(parquet.Int64Value(x), c.valid, i, col))
	}
	p.buf = out
	return out
}

func (p *values) int32s(c *int64s, col int) []parquet.Value {
	out := p.reset(len(c.v))
	for i, x := range c.v {
		out = append(out, level(parquet.Int32Value(int32(x)), c.valid, i, col))
	}
	p.buf = out
	return out
}

func (p *values) float64s(c *float64s, col int) []parquet.Value {
	out := p.reset(len(c.v))
	for i, x := range c.v {
		out = append(out, level(parquet.DoubleValue(x), c.valid, i, col))
	}
	p.buf = out
	return out
}

func (p *values) strs(c *strs, col int) []parquet.Value {
	out := p.reset(len(c.v))
	for i, x := range c.v {
		out = append(out, level(parquet.ByteArrayValue(bytesOf(x)), c.valid, i, col))
	}
	p.buf = out
	return out
}

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
