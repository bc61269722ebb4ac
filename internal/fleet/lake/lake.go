package lake

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/parquet-go/parquet-go"
	"golang.org/x/sync/errgroup"

	"github.com/yukart/candec/dbc"
	"github.com/yukart/candec/decoder"
	"github.com/yukart/candec/frame"
	"github.com/yukart/candec/internal/base/defaults"
)

// DefaultMemoryBytes bounds the rows one Writer buffers, over all its
// tables: past it, the table holding the most is written out as a row
// group of its own. It keeps a decode of many messages within a known
// memory whatever the capture.
const DefaultMemoryBytes = 256 << 20

// MarkerName is the file at the lake's root that says which DBC files
// and signal globs made it.
const MarkerName = "_candec_lake.json"

// LockName is the file at the lake's root that an open Lake holds an
// exclusive lock on (flock), so that two runs never write one lake at
// once; owners sharing a lake (Config.Owner) hold it shared. While held
// exclusively it holds the holder's process ID; it stays, empty, when
// the run ends: removing it could let two runs lock two files.
const LockName = "_candec_lake.lock"

// Metadata keys of every lake file (Parquet key-value metadata).
const (
	MetaDBC     = "candec.dbc"     // Config.DBC
	MetaInput   = "candec.input"   // the input's hash, as in the file name
	MetaMessage = "candec.message" // the message the table holds
	MetaBus     = "candec.bus"     // the interface its rows came on
)

var (
	// ErrMixed: the directory holds a lake made from other DBC files or
	// other signal globs; adding to it would mix two schemas.
	ErrMixed = errors.New("lake: the directory holds a lake of other DBC files or signals")
	// ErrNotLake: the directory is not empty and is no lake.
	ErrNotLake = errors.New("lake: the directory is not empty and holds no lake")
	// ErrBusy: another run has the lake open (Open).
	ErrBusy = errors.New("lake: another candec run is writing the lake")
	// ErrLink: a symbolic link where the lake has a file or a partition
	// directory of its own. A lake never holds one: it could point
	// outside, and a link planted in a shared lake would make a run
	// write or truncate a file it was never given.
	ErrLink = errors.New("lake: a symbolic link in the lake")
	// ErrNotRegular: something other than a regular file (a named pipe,
	// a device, a directory) where the lake has a file of its own.
	ErrNotRegular = errors.New("lake: not a regular file")
)

// Perm is the mode of the lake's files, less the umask, as os.Create
// gives; DirPerm that of its directories, as mkdir gives.
const (
	Perm    = 0o666
	DirPerm = 0o777
)

// Config says where a lake is and what makes it.
type Config struct {
	// Dir is the lake's root directory; Open creates it if need be.
	Dir string
	// DBC identifies the DBC files that decode the lake's inputs (a
	// hash of their contents and of which interface each decodes). It
	// is recorded in the marker and in every file.
	DBC string
	// Signals are the signal globs of the decode (decoder.RouterConfig):
	// a table has a column for each selected signal only.
	Signals []string
	// PolicyColumn gives every table the column policy_version: the
	// version of the campaign whose policy published the row's values
	// (Writer.SetPolicyVersion), 0 for none. The ingest's lake has it.
	PolicyColumn bool
	// RowGroupRows is the rows of a full row group; 0 is
	// DefaultTableRowGroupRows.
	RowGroupRows int
	// MemoryBytes bounds what a Writer buffers; 0 is DefaultMemoryBytes.
	MemoryBytes int64
	// Store holds the lake's files; nil is the directory Dir, locked
	// while open (see Open). With a Store, Dir only names the lake in
	// messages, and no lock keeps two runs apart (an object store has
	// none): one decode writes one prefix at a time.
	Store Store
	// Owner, when set, names one of several writers sharing the lake
	// (the instances of an ingest). In a directory, an owner takes the
	// lock shared, so that owners run together while a run without an
	// owner (a decode) and owners exclude each other, and Open removes
	// only the temporary files of this owner (.candec-<owner>-*.tmp,
	// the owner escaped). "" is a lake of one writer at a time.
	Owner string
}

// Lake is a lake open for writing; a directory's is locked against
// other runs until Close.
type Lake struct {
	cfg     Config
	store   Store
	dir     *dirStore // the store, when it is the directory's
	name    string    // the lake, in messages
	removed int
	closed  bool

	// layouts are the tables' schemas, made once per message for every
	// Writer of the lake: an ingest has a Writer per vehicle, and a
	// schema of its own in each would cost tens of kB a vehicle.
	layoutMu sync.Mutex
	layouts  map[*dbc.Message]*layout
}

type marker struct {
	Format  int      `json:"candec_lake"`
	DBC     string   `json:"dbc"`
	Signals []string `json:"signals"`
}

// Open opens the lake at cfg.Dir (or in cfg.Store) for writing: it
// creates the directory and its marker, or checks that the marker
// there names the same DBC files and signals (else ErrMixed). A
// directory (or a store's prefix) that is not empty and has no marker
// is refused (ErrNotLake): a lake is never written over other files.
//
// Open locks a directory's lake until Close, and refuses at once a
// lake that another run has open (ErrBusy), rather than wait for it;
// owners (Config.Owner) share the lock. Holding the lock, it removes
// the temporary files that a run killed before its Commit left in the
// lake's directories (see Removed): every one without an owner, this
// owner's only with one.
func Open(cfg Config) (*Lake, error) {
	cfg.RowGroupRows = defaults.Positive(cfg.RowGroupRows, DefaultTableRowGroupRows)
	cfg.MemoryBytes = defaults.Positive(cfg.MemoryBytes, DefaultMemoryBytes)
	if cfg.Signals == nil {
		cfg.Signals = []string{}
	}
	l := &Lake{cfg: cfg, store: cfg.Store, name: cfg.Dir}
	if cfg.Store == nil {
		s, err := openDirStore(cfg.Dir, cfg.Owner)
		if err != nil {
			return nil, err
		}
		if err := s.lockLake(); err != nil {
			s.close()
			return nil, err
		}
		l.store, l.dir = s, s
	} else if l.name == "" {
		l.name = cfg.Store.String()
	}
	if err := l.open(); err != nil {
		l.Close()
		return nil, err
	}
	return l, nil
}

// open checks or makes the marker, then removes the temporary files of
// an earlier run.
func (l *Lake) open() error {
	want := marker{Format: 1, DBC: l.cfg.DBC, Signals: l.cfg.Signals}
	err := l.checkMarker(want)
	if errors.Is(err, fs.ErrNotExist) {
		err = l.create(want)
	}
	if err == nil && l.dir != nil {
		l.removed, err = l.dir.removeTemps()
	}
	return err
}

// checkMarker reads the lake's marker and compares it with want;
// fs.ErrNotExist when there is none.
func (l *Lake) checkMarker(want marker) error {
	b, err := l.store.ReadFile(MarkerName, 1<<20)
	if err != nil {
		return err
	}
	var got marker
	if err := json.Unmarshal(b, &got); err != nil {
		return fmt.Errorf("lake: %s: %w", l.where(MarkerName), err)
	}
	if got.DBC != want.DBC || !slices.Equal(got.Signals, want.Signals) {
		return fmt.Errorf("%w: %s was made by dbc %s, signals %q; this run has dbc %s, signals %q",
			ErrMixed, l.name, got.DBC, got.Signals, want.DBC, want.Signals)
	}
	return nil
}

// create makes a new lake, its marker, where there is nothing else
// (ErrNotLake). Owners opening a new lake at once make one marker: in
// a directory, the first to link it in place; the others check theirs
// against it.
func (l *Lake) create(want marker) error {
	empty, err := l.empty()
	if err != nil {
		return err
	}
	if !empty {
		// An owner may have made the lake since its marker was read.
		if err := l.checkMarker(want); !errors.Is(err, fs.ErrNotExist) {
			return err
		}
		return fmt.Errorf("%w: %s", ErrNotLake, l.name)
	}
	b, _ := json.Marshal(want)
	b = append(b, '\n')
	if l.dir != nil {
		_, err = l.dir.writeNew(MarkerName, b)
	} else {
		err = l.store.WriteFile(MarkerName, b)
	}
	if err != nil {
		return err
	}
	return l.checkMarker(want)
}

// empty reports whether the lake holds nothing (its lock, marker and
// temporary files aside).
func (l *Lake) empty() (bool, error) {
	if l.dir != nil {
		return l.dir.emptyRoot()
	}
	names, err := l.store.List("")
	for _, n := range names {
		if n != MarkerName {
			return false, err
		}
	}
	return true, err
}

// where names rel, in the lake, for a message.
func (l *Lake) where(rel string) string {
	if l.dir != nil {
		return l.dir.path(rel)
	}
	return strings.TrimSuffix(l.store.String(), "/") + "/" + rel
}

// tempPattern names a lake file being written (createTemp).
const tempPattern = ".candec-*.tmp"

// isTemp reports whether name is one of tempPattern.
func isTemp(name string) bool {
	ok, _ := path.Match(tempPattern, name)
	return ok
}

// Removed returns how many temporary files of an earlier run, killed
// before it committed them, Open removed.
func (l *Lake) Removed() int { return l.removed }

// Store returns the store that holds the lake's files, for files of
// the caller's own beside the tables (an ingest's manifests). A name
// starting "_candec_" is free for that.
func (l *Lake) Store() Store { return l.store }

// Close unlocks the lake, once every Writer has committed or aborted.
// A second Close does nothing.
func (l *Lake) Close() error {
	if l.closed {
		return nil
	}
	l.closed = true
	if l.dir != nil {
		return l.dir.close()
	}
	return nil
}

// Writer writes the tables of one input at a time: Write its decoded
// frames, then Commit with the input's hash, or Abort; then the next
// input's, if any. Writers of one Lake work in parallel (each on its
// own goroutine); a Writer belongs to one.
type Writer struct {
	lake     *Lake
	schemas  map[*dbc.Message]*layout
	tables   map[tableKey]*table
	order    []*table // in order of creation, for a deterministic choice
	last     *table
	buffered int64
	tabBytes int64 // the open tables' own structures (Buffered)
	pv       values
	policy   int64 // SetPolicyVersion's, for the rows written next
	rows     int64
	files    int
	trunc    int
	// idle holds the tables of the inputs committed, by message: the
	// next input's table of the message takes over its buffers and
	// Parquet writer rather than making new ones (fresh memory is what
	// costs most in a decode of many short captures).
	idle map[*dbc.Message][]*table
	bus  []string // a table's bus column, made when it is written

	prefix    string   // of the partition directories
	err       error    // a prefix refused
	committed []string // by the last Commit
}

type tableKey struct {
	msg *dbc.Message
	bus string
	day int64
}

// NewWriter returns a Writer, for one input or several in turn, whose
// tables go under message=<m>/date=<d>/: NewWriterIn("").
func (l *Lake) NewWriter() *Writer { return l.NewWriterIn("") }

// NewWriterIn returns a Writer whose tables go under
// <prefix>/message=<m>/date=<d>/, prefix a slash-separated path in the
// lake such as "vehicle=kart01" (its elements escaped by the caller,
// with Escape). A prefix that is absolute or has a "." or ".." element
// or an empty one is refused: Write and Commit return the error.
func (l *Lake) NewWriterIn(prefix string) *Writer {
	w := &Writer{lake: l, prefix: prefix, schemas: map[*dbc.Message]*layout{}, tables: map[tableKey]*table{}, idle: map[*dbc.Message][]*table{}}
	if prefix != "" && (prefix == "." || !fs.ValidPath(prefix)) {
		w.err = fmt.Errorf("lake: partition prefix %q is not a relative path in the lake (no leading '/', no \".\", \"..\" or empty element)", prefix)
	}
	return w
}

// layout is a message's table schema: the columns and, per signal of
// the message, where its value and label go.
type layout struct {
	schema  *parquet.Schema
	j1939   bool
	policy  bool     // the policy_version column (Config.PolicyColumn)
	base    int      // lowest Signal.Index of the message
	slot    []int    // Signal.Index-base → index in sigs, -1 when not selected
	sigs    []sigDef // selected signals in message order
	columns int
	rowSize int64 // bytes a buffered row takes
}

type sigDef struct {
	s        *dbc.Signal
	name     string // its column's name
	integer  bool
	labelled bool
	scale    float64 // decoder.ScaleDecimals, worked out once
}

// Fixed columns of every table.
const (
	tTime = iota
	tBus
	tID
)

func (w *Writer) layout(m *dbc.Message) *layout {
	if lo, ok := w.schemas[m]; ok {
		return lo
	}
	l := w.lake
	l.layoutMu.Lock()
	defer l.layoutMu.Unlock()
	lo, ok := l.layouts[m]
	if !ok {
		lo = l.newLayout(m)
		if l.layouts == nil {
			l.layouts = map[*dbc.Message]*layout{}
		}
		l.layouts[m] = lo
	}
	w.schemas[m] = lo
	return lo
}

// newLayout makes m's layout; it is read only from then on.
func (l *Lake) newLayout(m *dbc.Message) *layout {
	lo := &layout{j1939: m.J1939, rowSize: 8 + 16 + 8 + 4}
	cols := []column{{"time", timeNode}, {"bus", stringNode}, {"id", int64Node}}
	used := map[string]bool{"time": true, "bus": true, "id": true, "oor": true}
	if m.J1939 {
		cols = append(cols, column{"sa", int32Node})
		used["sa"] = true
		lo.rowSize += 8
	}
	if l.cfg.PolicyColumn {
		cols = append(cols, column{PolicyColumn, int64Node})
		used[PolicyColumn], lo.policy = true, true
		lo.rowSize += 8
	}
	cols = append(cols, column{"oor", oorNode})
	unique := func(name string) string {
		for i := 2; used[name]; i++ {
			if n := name + "_" + strconv.Itoa(i); !used[n] {
				name = n
			}
		}
		used[name] = true
		return name
	}
	lo.base, lo.slot = 0, nil
	if len(m.Signals) > 0 {
		lo.base = m.Signals[0].Index
		hi := lo.base
		for _, s := range m.Signals {
			lo.base, hi = min(lo.base, s.Index), max(hi, s.Index)
		}
		lo.slot = make([]int, hi-lo.base+1)
		for i := range lo.slot {
			lo.slot[i] = -1
		}
	}
	for _, s := range m.Signals {
		if !matches(l.cfg.Signals, s) {
			continue
		}
		d := sigDef{s: s, name: unique(s.Name), integer: IntegerColumn(s), labelled: len(s.Values) > 0 && s.Type == dbc.Integer,
			scale: decoder.ScaleDecimals(s.Factor, s.Offset)}
		lo.slot[s.Index-lo.base] = len(lo.sigs)
		lo.sigs = append(lo.sigs, d)
		node := doubleNode
		if d.integer {
			node = int64Node
		}
		cols = append(cols, column{d.name, parquet.Optional(node)})
		lo.rowSize += 9
		if d.labelled {
			cols = append(cols, column{unique(s.Name + "_label"), parquet.Optional(stringNode)})
			lo.rowSize += 17
		}
	}
	lo.columns = len(cols)
	lo.schema = newSchema(m.Name, cols)
	return lo
}

// table is the rows of one message on one bus on one day, from one
// input: one file of the lake.
type table struct {
	key   tableKey
	lo    *layout
	dir   string   // the partition directory, relative to the lake's
	file  TempFile // being written, from the first row group on
	n     int      // rows buffered
	time  vec[int64]
	id    vec[int64]
	sa    vec[int64]
	pol   vec[int64] // policy_version
	oor   lists      // the columns of the values out of range
	vals  []sigCol
	out   *bufio.Writer
	pw    *parquet.Writer
	wrote bool
}

type sigCol struct {
	ints   vec[int64]
	floats vec[float64]
	label  vec[string]
}

const dayNanos = int64(24 * time.Hour)

// Day returns the UTC day of t (ns since the Unix epoch), in days since
// the epoch: the date partition of a row at time t.
func Day(t int64) int64 {
	day := t / dayNanos
	if t < 0 && t%dayNanos != 0 {
		day--
	}
	return day
}

// DayDate returns the date of day (Day's) as the date= partition names
// it, 2026-12-04. It works in seconds: the day's first nanosecond can
// lie outside int64 (the day of 1677-09-21, the earliest time an INT64
// TIMESTAMP(NANOS) holds, starts before it), and a date computed in
// nanoseconds would then wrap round to 2262.
func DayDate(day int64) string {
	return time.Unix(day*int64(24*time.Hour/time.Second), 0).UTC().Format("2006-01-02")
}

func (w *Writer) table(m *dbc.Message, bus string, t int64) *table {
	k := tableKey{m, bus, Day(t)}
	if w.last != nil && w.last.key == k {
		return w.last
	}
	tb, ok := w.tables[k]
	if !ok {
		lo := w.layout(m)
		dir := path.Join(w.prefix, "message="+escape(m.Name), "date="+DayDate(k.day))
		if idle := w.idle[m]; len(idle) > 0 {
			tb, w.idle[m] = idle[len(idle)-1], idle[:len(idle)-1]
			tb.key, tb.dir, tb.wrote = k, dir, false
		} else {
			tb = &table{key: k, lo: lo, vals: make([]sigCol, len(lo.sigs)), dir: dir}
			for i := range tb.vals {
				c := &tb.vals[i]
				c.ints.valid, c.floats.valid, c.label.valid = []bool{}, []bool{}, []bool{}
			}
		}
		w.tables[k] = tb
		w.order = append(w.order, tb)
		w.tabBytes += tableBytes(lo)
	}
	w.last = tb
	return tb
}

// Write adds frame f's values as a row of its message's table. Values
// of signals the multiplexer did not select, and truncated ones, are
// null.
func (w *Writer) Write(f *frame.Frame, iface string, vals []decoder.Value) error {
	if w.err != nil {
		return w.err
	}
	if len(vals) == 0 {
		return nil
	}
	tb := w.table(vals[0].Signal.Message, iface, f.Time)
	lo := tb.lo
	tb.time.v = append(tb.time.v, f.Time)
	tb.id.v = append(tb.id.v, int64(f.ID))
	if lo.j1939 {
		tb.sa.v = append(tb.sa.v, int64(vals[0].SA))
	}
	if lo.policy {
		tb.pol.v = append(tb.pol.v, w.policy)
	}
	for i := range tb.vals {
		c := &tb.vals[i]
		if lo.sigs[i].integer {
			c.ints.v = append(c.ints.v, 0)
			c.ints.valid = append(c.ints.valid, false)
		} else {
			c.floats.v = append(c.floats.v, 0)
			c.floats.valid = append(c.floats.valid, false)
		}
		if lo.sigs[i].labelled {
			c.label.v = append(c.label.v, "")
			c.label.valid = append(c.label.valid, false)
		}
	}
	n := tb.n
	for i := range vals {
		v := &vals[i]
		if v.Flags&decoder.Truncated != 0 {
			w.trunc++
			continue
		}
		j := v.Signal.Index - lo.base
		if j < 0 || j >= len(lo.slot) || lo.slot[j] < 0 {
			continue
		}
		c := &tb.vals[lo.slot[j]]
		if v.Flags&decoder.OutOfRange != 0 {
			tb.oor.v = append(tb.oor.v, lo.sigs[lo.slot[j]].name)
			w.buffered += 16
		}
		if lo.sigs[lo.slot[j]].integer {
			if v.Flags&decoder.Exact != 0 {
				c.ints.v[n], c.ints.valid[n] = v.Int, true
			}
		} else {
			c.floats.v[n], c.floats.valid[n] = tidy(v, lo.sigs[lo.slot[j]].scale), true
		}
		if lo.sigs[lo.slot[j]].labelled {
			if l, ok := label(v); ok {
				c.label.v[n], c.label.valid[n] = l, true
			}
		}
	}
	tb.oor.end = append(tb.oor.end, int32(len(tb.oor.v)))
	tb.n++
	w.rows++
	w.buffered += lo.rowSize
	if tb.n >= w.lake.cfg.RowGroupRows {
		return w.flush(tb)
	}
	if w.buffered > w.lake.cfg.MemoryBytes {
		big := w.order[0]
		for _, t := range w.order[1:] {
			if int64(t.n)*t.lo.rowSize > int64(big.n)*big.lo.rowSize {
				big = t
			}
		}
		return w.flush(big)
	}
	return nil
}

// flush writes tb's buffered rows as a row group, creating its file
// on the first.
func (w *Writer) flush(tb *table) error {
	if tb.n == 0 {
		return nil
	}
	if tb.file == nil {
		f, err := w.lake.createTemp(tb.dir)
		if err != nil {
			return err
		}
		tb.file = f
		if tb.pw == nil {
			tb.out = bufio.NewWriterSize(f, 32<<10)
			tb.pw = parquet.NewWriter(tb.out, tb.lo.schema, parquet.Compression(codec))
		} else { // a table of an input before: its writer starts a file again
			tb.out.Reset(f)
			tb.pw.Reset(tb.out)
		}
	}
	pw, p, lo := tb.pw, &w.pv, tb.lo
	if err := writeColumn(pw, tTime, of(p, &tb.time, tTime, parquet.Int64Value)); err != nil {
		return err
	}
	if cap(w.bus) < tb.n {
		w.bus = make([]string, tb.n)
	}
	bus := vec[string]{v: w.bus[:tb.n]}
	for i := range bus.v {
		bus.v[i] = tb.key.bus
	}
	if err := writeColumn(pw, tBus, of(p, &bus, tBus, stringValue)); err != nil {
		return err
	}
	if err := writeColumn(pw, tID, of(p, &tb.id, tID, parquet.Int64Value)); err != nil {
		return err
	}
	col := tID + 1
	if lo.j1939 {
		if err := writeColumn(pw, col, of(p, &tb.sa, col, int32Value)); err != nil {
			return err
		}
		col++
	}
	if lo.policy {
		if err := writeColumn(pw, col, of(p, &tb.pol, col, parquet.Int64Value)); err != nil {
			return err
		}
		col++
	}
	if err := writeColumn(pw, col, p.lists(&tb.oor, col)); err != nil {
		return err
	}
	col++
	for i := range tb.vals {
		c := &tb.vals[i]
		var err error
		if lo.sigs[i].integer {
			err = writeColumn(pw, col, of(p, &c.ints, col, parquet.Int64Value))
		} else {
			err = writeColumn(pw, col, of(p, &c.floats, col, parquet.DoubleValue))
		}
		if err != nil {
			return err
		}
		col++
		if lo.sigs[i].labelled {
			if err := writeColumn(pw, col, of(p, &c.label, col, stringValue)); err != nil {
				return err
			}
			col++
		}
	}
	if err := pw.Flush(); err != nil {
		return err
	}
	w.drop(tb)
	tb.wrote = true
	return nil
}

// drop forgets the rows buffered in tb, keeping the room of its slices
// for the next row group.
func (w *Writer) drop(tb *table) {
	w.buffered -= int64(tb.n)*tb.lo.rowSize + 16*int64(len(tb.oor.v))
	tb.n = 0
	tb.time.v, tb.id.v, tb.sa.v, tb.pol.v = tb.time.v[:0], tb.id.v[:0], tb.sa.v[:0], tb.pol.v[:0]
	tb.oor.v, tb.oor.end = tb.oor.v[:0], tb.oor.end[:0]
	for i := range tb.vals {
		c := &tb.vals[i]
		c.ints.v, c.ints.valid = c.ints.v[:0], c.ints.valid[:0]
		c.floats.v, c.floats.valid = c.floats.v[:0], c.floats.valid[:0]
		c.label.v, c.label.valid = c.label.v[:0], c.label.valid[:0]
	}
}

// Buffered returns the bytes of rows the Writer holds in memory, not
// yet written to a file (the figure Config.MemoryBytes bounds): the
// input's rows buffered in its tables, their columns at their size.
// The slices that hold them may have up to twice that capacity.
func (w *Writer) Buffered() int64 { return w.buffered + w.tabBytes }

// tableBytes is what a new table costs before its first row: the table,
// its columns' slice headers and their first allocations, as measured
// (BenchmarkManyVehiclesOneCommit in internal/fleet/ingest) rather than
// worked out from the types.
func tableBytes(lo *layout) int64 { return 512 + 96*int64(lo.columns) }

// DropIdle forgets the tables that Commit keeps for the next input to
// reuse (their Parquet writers and buffers, a few hundred kB a table):
// a Writer that waits long between inputs, an ingest's vehicle's
// between commits, then holds no memory meanwhile.
func (w *Writer) DropIdle() { clear(w.idle) }

// SetPolicyVersion sets the policy_version of the rows written from
// now on (Config.PolicyColumn; without it the version is not kept). A
// version is at most campaign.MaxVersion, well within int64.
func (w *Writer) SetPolicyVersion(version uint64) { w.policy = int64(version) }

// Rows returns the rows written so far; Truncated the values left out
// (null) because their signal did not fit in a short frame.
func (w *Writer) Rows() int64    { return w.rows }
func (w *Writer) Truncated() int { return w.trunc }

// Files returns the files Commit made visible.
func (w *Writer) Files() int { return w.files }

// Committed returns the names, relative to the lake's root, of the
// files the last Commit made visible, sorted. After a Commit that
// failed, they are those it made visible all the same.
func (w *Writer) Committed() []string { return slices.Clone(w.committed) }

// Commit writes every table of the input to the end and commits each
// file (File.Commit: durable, then visible) under its name,
// <bus>-<input>.parquet in its partition directory, replacing the file
// of an earlier run on the same input. input is a hash of the input's
// content, or another name of letters, digits, '_', '-' and '.' that
// Escape leaves as it is.
func (w *Writer) Commit(input string) error {
	w.committed = nil
	if w.err != nil {
		return w.err
	}
	if input == "" || escape(input) != input {
		return fmt.Errorf("lake: input name %q: want letters, digits, '_', '-' and '.' (not leading)", input)
	}
	for _, tb := range w.order {
		if err := w.flush(tb); err != nil {
			return err
		}
		setMeta(tb.pw, map[string]string{MetaDBC: w.lake.cfg.DBC, MetaInput: input,
			MetaMessage: tb.key.msg.Name, MetaBus: tb.key.bus})
		if err := tb.pw.Close(); err != nil {
			return err
		}
		if err := tb.out.Flush(); err != nil {
			return err
		}
	}
	return w.commitFiles(input)
}

// commitFiles commits the input's files. Each file is durable before
// it gets its name, so that not even a crash of the machine leaves a
// named file cut short. That waits for the disk (or the object store),
// not the CPU: the files of an input are committed at once, which lets
// a file system sync them together and an object store take them in
// parallel.
func (w *Writer) commitFiles(input string) error {
	var (
		g  errgroup.Group
		mu sync.Mutex
	)
	g.SetLimit(16)
	for _, tb := range w.order {
		name := path.Join(tb.dir, escape(tb.key.bus)+"-"+input+".parquet")
		f := tb.file
		tb.file = nil // committed or, on an error, dropped
		g.Go(func() error {
			if err := f.CommitAs(name); err != nil {
				return err
			}
			mu.Lock()
			w.committed = append(w.committed, name)
			mu.Unlock()
			return nil
		})
	}
	err := g.Wait()
	slices.Sort(w.committed)
	w.files += len(w.committed)
	if err != nil {
		return err
	}
	for _, tb := range w.order {
		w.idle[tb.key.msg] = append(w.idle[tb.key.msg], tb)
	}
	w.order, w.tables, w.last, w.tabBytes = nil, map[tableKey]*table{}, nil, 0
	return nil
}

// Abort drops the files of an input that did not decode to its end
// (nothing of them becomes visible); what earlier runs committed stays.
func (w *Writer) Abort() {
	for _, tb := range w.order {
		if tb.file != nil {
			tb.file.Abort()
			tb.file = nil
		}
	}
	w.order, w.tables, w.last, w.buffered, w.tabBytes = nil, map[tableKey]*table{}, nil, 0, 0
}

// defaultPartition is Hive's name of a partition whose value is null
// or empty.
const defaultPartition = "__HIVE_DEFAULT_PARTITION__"

// Escape makes s safe as one path element and as a Hive partition
// value: letters, digits, '_', '-' and '.' (not leading) stay, any
// other byte becomes %XX, as Hive escapes it. The empty string becomes
// __HIVE_DEFAULT_PARTITION__ (a null to Hive and Spark), and that
// string itself %5F_HIVE_DEFAULT_PARTITION__. So the result is never
// empty, "." or "..", has no '/', and two strings never share one.
func Escape(s string) string {
	switch s {
	case "":
		return defaultPartition
	case defaultPartition:
		return "%5F" + s[1:]
	}
	return escape(s)
}

// escape is Escape without its special cases: the lake's own names
// (a message's, an interface's) have been escaped so from the start,
// and a lake's file names must not change.
func escape(s string) string {
	const hex = "0123456789ABCDEF"
	var b []byte
	for i := 0; i < len(s); i++ {
		c := s[i]
		ok := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-' || c == '.' && i > 0
		if ok {
			b = append(b, c)
		} else {
			b = append(b, '%', hex[c>>4], hex[c&15])
		}
	}
	return string(b)
}

// createTemp starts a table's file in dir: in the store, when it can
// start a file before its name is known (TempStore), else in a local
// temporary file copied into the store at its commit.
func (l *Lake) createTemp(dir string) (TempFile, error) {
	if ts, ok := l.store.(TempStore); ok {
		return ts.CreateTemp(dir)
	}
	return newSpool(l.store)
}
