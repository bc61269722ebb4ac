package lake

import (
	"bufio"
	"cmp"
	"fmt"
	"io"
	"math"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/parquet-go/parquet-go"

	"github.com/yukart/candec/dbc"
	"github.com/yukart/candec/decoder"
	"github.com/yukart/candec/frame"
)

// Row group sizes. A query engine reads a row group as a unit, and
// DuckDB, Spark and Trino work best with 100k–1M rows in one; a smaller
// group costs metadata and seeks, a larger one memory while writing.
const (
	// DefaultRowGroupRows is the rows of a row group of the long file.
	DefaultRowGroupRows = 1 << 17
	// DefaultTableRowGroupRows is the rows of a row group of a lake
	// table, whose rows are wider (a column per signal).
	DefaultTableRowGroupRows = 1 << 18
)

// The long file's columns, in order.
const (
	lTime = iota
	lBus
	lID
	lSA
	lMessage
	lSignal
	lValue
	lNonfinite
	lUnit
	lLabel
	lOOR
	lColumns
)

var longSchema = newSchema("candec_values", []column{
	{"time", timeNode},
	{"bus", stringNode},
	{"id", int64Node},
	{"sa", parquet.Optional(int32Node)},
	{"message", stringNode},
	{"signal", stringNode},
	{"value", parquet.Optional(doubleNode)},
	{"nonfinite", parquet.Optional(stringNode)},
	{"unit", parquet.Optional(stringNode)},
	{"label", parquet.Optional(stringNode)},
	{"oor", boolNode},
})

// Long writes decoded values to one Parquet file in long form, a row
// per value, with the columns of the JSON lines (docs/lake.md). Write
// buffers rows a chunk at a time and hands each full chunk on to be
// written into the row group being built; Close writes the rest and the
// footer. A Long belongs to one goroutine.
type Long struct {
	out       *bufio.Writer
	w         *parquet.Writer
	rows      int // rows a row group holds
	inGroup   int // rows of the row group being built, cur's included
	cur       []longRow
	lines     int
	truncated int
	sigs      longSigs
	buses     [][]byte // the interfaces, by longRow.bus
	lastBus   string
	busIndex  uint16

	// The columns of a chunk are written on goroutines of their own
	// while Write fills the next chunk: decoding and encoding then run
	// on every core. Each column takes the chunks one at a time, in
	// order, so the file is the same whatever the timing; a column
	// does not wait for the others except at the end of a row group.
	// Only the chunks in flight are in memory, not a whole row group:
	// fresh memory (page faults) is what costs most in a short decode.
	queue   []*longJob // chunks handed on, oldest first
	spare   [][]longRow
	cols    [lColumns]longColumn
	failed  atomic.Bool // a column failed: err says why
	errOnce sync.Once
	err     error
}

// longColumn is the chunks a column has still to write. A goroutine
// writes them while there are any (run, made once, starts it without
// an allocation), and ends when there are none: a Long that is never
// closed leaves no goroutine behind.
type longColumn struct {
	mu      sync.Mutex
	queue   []*longJob
	running bool
	run     func()
	pv      values // the column's parquet values
}

// longJob is a chunk of rows being written, a column at a time by the
// columns' goroutines; the chunk that ends a row group flushes the
// group once every column has been written.
type longJob struct {
	rows  []longRow
	sigs  []longSig // the signals and interfaces of the rows: what the
	buses [][]byte  // tables held when the chunk was handed on
	end   bool
	left  atomic.Int32  // columns still to write
	done  chan struct{} // closed when every column is (and the group flushed)
}

const (
	// longChunk is the rows of a chunk: the parquet values of a column
	// of a chunk stay in the CPU's cache between conversion and
	// encoding.
	longChunk = 4096
	// longInFlight is the chunks handed on and not yet written at most,
	// beyond which Write waits.
	longInFlight = 8
)

// longRow is a buffered row: what the columns are made of when its
// chunk is written. It holds no pointer, so that the garbage collector
// need not scan the chunks: the names, unit and label are those of the
// signal in the Long's table.
type longRow struct {
	time  int64
	value float64 // by the number rule; 0 for a non-finite value
	sig   uint32  // in the Long's signals
	id    uint32
	label uint32 // 1 + the label's index in the signal's Values; 0 for none
	bus   uint16 // in the Long's interfaces
	sa    uint8
	flags uint8
}

// longRow flags.
const (
	rowJ1939 = 1 << iota
	rowOOR
	rowNaN
	rowPosInf
	rowNegInf
)

// longSig is a signal of the long file: the bytes of its columns and
// the scale that tidies its values, worked out when it is first seen.
type longSig struct {
	sig             *dbc.Signal
	msg, name, unit []byte
	scale           float64 // decoder.ScaleDecimals
}

// longSigs numbers the signals of a Long. The signals of a message get
// consecutive numbers, in the order of their Signal.Index, so that a
// frame's values need one look-up of their message.
type longSigs struct {
	list    []longSig
	byMsg   map[*dbc.Message]msgSigs
	bySig   map[*dbc.Signal]uint32 // signals not among their message's
	lastMsg *dbc.Message
	last    msgSigs
}

// msgSigs is where a message's signals are in longSigs.list: Signal.Index
// i at first + i − base, for base ≤ i < base + n.
type msgSigs struct {
	first   uint32
	base, n int
}

// message returns where the signals of m are, numbering them if m is new.
func (t *longSigs) message(m *dbc.Message) msgSigs {
	if m == t.lastMsg && m != nil {
		return t.last
	}
	ms, ok := t.byMsg[m]
	if !ok {
		if t.byMsg == nil {
			t.byMsg = map[*dbc.Message]msgSigs{}
		}
		ms.first = uint32(len(t.list))
		if m != nil && len(m.Signals) > 0 {
			lo, hi := m.Signals[0].Index, m.Signals[0].Index
			for _, s := range m.Signals {
				lo, hi = min(lo, s.Index), max(hi, s.Index)
			}
			ms.base, ms.n = lo, hi-lo+1
			t.list = append(t.list, make([]longSig, ms.n)...)
			for _, s := range m.Signals {
				if e := &t.list[int(ms.first)+s.Index-lo]; e.sig == nil {
					*e = newLongSig(s)
				}
			}
		}
		t.byMsg[m] = ms
	}
	t.lastMsg, t.last = m, ms
	return ms
}

// number returns the number of s, of a message found by message.
func (t *longSigs) number(ms msgSigs, s *dbc.Signal) uint32 {
	if j := s.Index - ms.base; j >= 0 && j < ms.n && t.list[int(ms.first)+j].sig == s {
		return ms.first + uint32(j)
	}
	// A signal that is not among its message's signals (values made by
	// hand): numbered on its own.
	n, ok := t.bySig[s]
	if !ok {
		if t.bySig == nil {
			t.bySig = map[*dbc.Signal]uint32{}
		}
		n = uint32(len(t.list))
		t.list = append(t.list, newLongSig(s))
		t.bySig[s] = n
	}
	return n
}

func newLongSig(s *dbc.Signal) longSig {
	e := longSig{sig: s, name: bytesOf(s.Name), scale: decoder.ScaleDecimals(s.Factor, s.Offset)}
	if s.Message != nil {
		e.msg = bytesOf(s.Message.Name)
	}
	if s.Unit != "" {
		e.unit = bytesOf(s.Unit)
	}
	return e
}

// tidy returns decoder.Tidy(v), with the scale of v's signal worked out
// beforehand.
func tidy(v *decoder.Value, scale float64) float64 {
	if v.Signal == nil || v.Flags&(decoder.Exact|decoder.Float) != 0 {
		return decoder.Tidy(v)
	}
	return decoder.TidyScaled(v.Phys, scale)
}

// labelIndex returns 1 + the index of v's label in its signal's value
// table, or 0 when it has none: the label the JSON lines write.
func labelIndex(v *decoder.Value) uint32 {
	s := v.Signal
	if len(s.Values) == 0 || v.Flags&decoder.Float != 0 {
		return 0
	}
	raw := int64(v.Raw)
	i, ok := slices.BinarySearchFunc(s.Values, raw, func(d dbc.ValueDescription, x int64) int { return cmp.Compare(d.Value, x) })
	if !ok {
		return 0
	}
	return uint32(i) + 1
}

// NewLong returns a Long that writes to w. meta is written in the
// file's key-value metadata (sorted by key, so the file is the same on
// every run).
func NewLong(w io.Writer, meta map[string]string) *Long {
	out := bufio.NewWriterSize(w, 1<<20)
	l := &Long{out: out, rows: DefaultRowGroupRows,
		w: parquet.NewWriter(out, longSchema, parquet.Compression(codec))}
	setMeta(l.w, meta)
	return l
}

// Write adds a row per value of frame f, received on interface iface.
// Truncated values (signals past the end of a short frame) are left
// out, as in the JSON lines; Truncated counts them.
func (l *Long) Write(f *frame.Frame, iface string, vals []decoder.Value) error {
	if len(vals) == 0 {
		return nil
	}
	bus, err := l.bus(iface)
	if err != nil {
		return err
	}
	// The values of a frame are of its one message.
	ms := l.sigs.message(vals[0].Signal.Message)
	for i := range vals {
		v := &vals[i]
		if v.Flags&decoder.Truncated != 0 {
			l.truncated++
			continue
		}
		n := l.sigs.number(ms, v.Signal)
		r := longRow{time: f.Time, sig: n, bus: bus, id: f.ID, sa: v.SA, label: labelIndex(v)}
		if v.Flags&decoder.J1939 != 0 {
			r.flags |= rowJ1939
		}
		if v.Flags&decoder.OutOfRange != 0 {
			r.flags |= rowOOR
		}
		switch {
		case v.Flags&decoder.Unsigned != 0:
			r.value = float64(v.Uint())
		case v.Flags&decoder.Exact != 0:
			r.value = float64(v.Int)
		case math.IsNaN(v.Phys):
			r.flags |= rowNaN
		case math.IsInf(v.Phys, 1):
			r.flags |= rowPosInf
		case math.IsInf(v.Phys, -1):
			r.flags |= rowNegInf
		default:
			r.value = tidy(v, l.sigs.list[n].scale)
		}
		if l.cur == nil {
			l.cur = make([]longRow, 0, longChunk)
		}
		l.cur = append(l.cur, r)
		l.lines++
		if l.inGroup++; l.inGroup == l.rows || len(l.cur) == longChunk {
			if err := l.hand(); err != nil {
				return err
			}
		}
	}
	return nil
}

// bus returns the number of interface iface.
func (l *Long) bus(iface string) (uint16, error) {
	if iface == l.lastBus && len(l.buses) > 0 {
		return l.busIndex, nil
	}
	i := slices.IndexFunc(l.buses, func(b []byte) bool { return string(b) == iface })
	if i < 0 {
		if len(l.buses) > math.MaxUint16 {
			return 0, fmt.Errorf("lake: more than %d interfaces in one long file", math.MaxUint16+1)
		}
		i = len(l.buses)
		l.buses = append(l.buses, bytesOf(iface))
	}
	l.lastBus, l.busIndex = iface, uint16(i)
	return l.busIndex, nil
}

// label returns the value-table label of v, as the JSON lines write it.
func label(v *decoder.Value) (string, bool) {
	s := v.Signal
	if len(s.Values) == 0 || v.Flags&decoder.Float != 0 {
		return "", false
	}
	return s.Label(int64(v.Raw))
}

// hand hands the chunk being filled on to be written; at the end of a
// row group, the group is flushed after it. It waits while
// longInFlight chunks are in flight, and returns the error of any
// column written before.
func (l *Long) hand() error {
	if l.failed.Load() {
		return l.err
	}
	j := &longJob{rows: l.cur, sigs: l.sigs.list, buses: l.buses, end: l.inGroup == l.rows, done: make(chan struct{})}
	if j.end {
		l.inGroup = 0
	}
	j.left.Store(lColumns)
	for col := range l.cols {
		c := &l.cols[col]
		c.mu.Lock()
		c.queue = append(c.queue, j)
		if !c.running {
			c.running = true
			if c.run == nil {
				c.run = func() { l.writeChunks(col) }
			}
			go c.run()
		}
		c.mu.Unlock()
	}
	l.queue = append(l.queue, j)
	l.cur = nil
	if len(l.queue) >= longInFlight {
		if err := l.waitOldest(); err != nil {
			return err
		}
	}
	if n := len(l.spare); n > 0 {
		l.cur, l.spare = l.spare[n-1][:0], l.spare[:n-1]
	}
	return nil
}

// writeChunks writes column col of the chunks handed on, in order,
// until there are none.
func (l *Long) writeChunks(col int) {
	c := &l.cols[col]
	for {
		c.mu.Lock()
		if len(c.queue) == 0 {
			c.running = false
			c.mu.Unlock()
			return
		}
		j := c.queue[0]
		c.queue = slices.Delete(c.queue, 0, 1)
		c.mu.Unlock()
		if !l.failed.Load() {
			if err := l.writeColumn(col, j, &c.pv); err != nil {
				l.fail(err)
			}
		}
		switch {
		case j.left.Add(-1) == 0:
			// The chunk's last column: every column of it is written.
			if j.end && !l.failed.Load() {
				if err := l.w.Flush(); err != nil {
					l.fail(err)
				}
			}
			close(j.done)
		case j.end:
			<-j.done // the next group's rows wait for this group's flush
		}
	}
}

// fail records the first error of a column or a flush.
func (l *Long) fail(err error) {
	l.errOnce.Do(func() {
		l.err = err
		l.failed.Store(true)
	})
}

// waitOldest waits for the oldest chunk in flight and keeps its rows'
// memory for another.
func (l *Long) waitOldest() error {
	j := l.queue[0]
	<-j.done
	l.queue = slices.Delete(l.queue, 0, 1)
	l.spare = append(l.spare, j.rows)
	if l.failed.Load() {
		return l.err
	}
	return nil
}

// writeColumn writes column col of the rows of chunk j.
func (l *Long) writeColumn(col int, j *longJob, pv *values) error {
	part := j.rows
	if len(part) == 0 {
		return nil
	}
	out := pv.reset(len(part))[:len(part)]
	defer func() { pv.buf = out }()
	if col <= lSignal {
		fillKeys(col, out, j)
	} else {
		fillValues(col, out, j)
	}
	for i := range out {
		out[i].SetColumnIndex(col)
	}
	return writeColumn(l.w, col, out)
}

// fillKeys fills out with column col of j's rows, one of the columns
// that say where a value is from: time, bus, ID, source address,
// message and signal.
func fillKeys(col int, out []parquet.Value, j *longJob) {
	part, sigs := j.rows, j.sigs
	switch col {
	case lTime:
		for i := range part {
			out[i] = parquet.Int64Value(part[i].time)
		}
	case lBus:
		for i := range part {
			out[i] = parquet.ByteArrayValue(j.buses[part[i].bus])
		}
	case lID:
		for i := range part {
			out[i] = parquet.Int64Value(int64(part[i].id))
		}
	case lSA:
		for i := range part {
			if part[i].flags&rowJ1939 == 0 {
				out[i] = parquet.Value{}
			} else {
				out[i] = defined(parquet.Int32Value(int32(part[i].sa)))
			}
		}
	case lMessage:
		for i := range part {
			out[i] = parquet.ByteArrayValue(sigs[part[i].sig].msg)
		}
	case lSignal:
		for i := range part {
			out[i] = parquet.ByteArrayValue(sigs[part[i].sig].name)
		}
	}
}

// fillValues fills out with column col of j's rows, one of the columns
// that say what the value is: the value (null when not finite), its
// non-finite name, unit, label and whether it was out of range.
func fillValues(col int, out []parquet.Value, j *longJob) {
	part, sigs := j.rows, j.sigs
	switch col {
	case lValue:
		for i := range part {
			if part[i].flags&(rowNaN|rowPosInf|rowNegInf) != 0 {
				out[i] = parquet.Value{}
			} else {
				out[i] = defined(parquet.DoubleValue(part[i].value))
			}
		}
	case lNonfinite:
		for i := range part {
			switch f := part[i].flags; {
			case f&rowNaN != 0:
				out[i] = defined(parquet.ByteArrayValue(nanName))
			case f&rowPosInf != 0:
				out[i] = defined(parquet.ByteArrayValue(posInfName))
			case f&rowNegInf != 0:
				out[i] = defined(parquet.ByteArrayValue(negInfName))
			default:
				out[i] = parquet.Value{}
			}
		}
	case lUnit:
		for i := range part {
			if u := sigs[part[i].sig].unit; u == nil {
				out[i] = parquet.Value{}
			} else {
				out[i] = defined(parquet.ByteArrayValue(u))
			}
		}
	case lLabel:
		for i := range part {
			if n := part[i].label; n == 0 {
				out[i] = parquet.Value{}
			} else {
				out[i] = defined(parquet.ByteArrayValue(bytesOf(sigs[part[i].sig].sig.Values[n-1].Label)))
			}
		}
	case lOOR:
		for i := range part {
			out[i] = parquet.BooleanValue(part[i].flags&rowOOR != 0)
		}
	}
}

// defined returns v with the definition level of a value (not a null)
// of an optional column.
func defined(v parquet.Value) parquet.Value {
	v.SetDefinitionLevel(1)
	return v
}

var (
	nanName    = []byte("NaN")
	posInfName = []byte("+Inf")
	negInfName = []byte("-Inf")
)

// Lines returns how many values Write has added, a row each.
func (l *Long) Lines() int { return l.lines }

// Truncated returns how many values Write left out because their
// signal did not fit in a short frame.
func (l *Long) Truncated() int { return l.truncated }

// Close writes the last row group and the footer. The file is a valid
// Parquet file only after Close.
func (l *Long) Close() error {
	if l.inGroup > 0 {
		l.inGroup = l.rows // the chunk ends the group
		if err := l.hand(); err != nil {
			return err
		}
	}
	for len(l.queue) > 0 {
		if err := l.waitOldest(); err != nil {
			return err
		}
	}
	if err := l.w.Close(); err != nil {
		return err
	}
	return l.out.Flush()
}

func setMeta(w *parquet.Writer, meta map[string]string) {
	keys := make([]string, 0, len(meta))
	for k := range meta {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		w.SetKeyValueMetadata(k, meta[k])
	}
}
