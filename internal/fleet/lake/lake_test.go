package lake

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/parquet-go/parquet-go"

	"github.com/yukart/candec/capture"
	"github.com/yukart/candec/dbc"
	"github.com/yukart/candec/decoder"
	"github.com/yukart/candec/envelope"
	"github.com/yukart/candec/frame"
)

var (
	carDBC  = filepath.Join("..", "..", "..", "testdata", "yukart.dbc")
	idleLog = filepath.Join("..", "..", "..", "testdata", "idle.log")
)

// decodeIdle feeds the car's idle capture, decoded with its DBC, to
// write, and returns the database.
func decodeIdle(t testing.TB, write func(*frame.Frame, string, []decoder.Value) error) *dbc.Database {
	t.Helper()
	db, err := dbc.Load(carDBC)
	if err != nil {
		t.Fatal(err)
	}
	decodeIdleWith(t, db, write)
	return db
}

// narrowDBC is the car's DBC with the range of every signal narrowed to
// 0..1: most values are out of it, some frames have none.
func narrowDBC(t testing.TB) *dbc.Database {
	t.Helper()
	db, err := dbc.Load(carDBC)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range db.Signals {
		s.Min, s.Max = 0, 1
	}
	return db
}

// decodeIdleWith feeds the idle capture, decoded with db, to write.
func decodeIdleWith(t testing.TB, db *dbc.Database, write func(*frame.Frame, string, []decoder.Value) error) {
	t.Helper()
	src, err := capture.Open(idleLog, capture.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	d := decoder.New(db)
	buf := make([]decoder.Value, 0, d.MaxSignals())
	var f frame.Frame
	for {
		if err := src.Next(&f); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			t.Fatal(err)
		}
		_, vals := d.Decode(&f, buf)
		if err := write(&f, src.Interface(f.Bus), vals); err != nil {
			t.Fatal(err)
		}
	}
}

// readRows reads every row of a Parquet file, with its column names.
func readRows(t testing.TB, name string) ([]string, []parquet.Row, map[string]string) {
	t.Helper()
	b, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	pf, err := parquet.OpenFile(bytes.NewReader(b), int64(len(b)))
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	var cols []string
	for _, p := range pf.Schema().Columns() {
		cols = append(cols, p[0])
	}
	r := parquet.NewReader(pf)
	var rows []parquet.Row
	buf := make([]parquet.Row, 64)
	for {
		n, err := r.ReadRows(buf)
		for _, row := range buf[:n] {
			rows = append(rows, row.Clone())
		}
		if err == io.EOF {
			break
		} else if err != nil {
			t.Fatal(err)
		}
	}
	meta := map[string]string{}
	for _, kv := range pf.Metadata().KeyValueMetadata {
		meta[kv.Key] = kv.Value
	}
	return cols, rows, meta
}

// stat is what a query engine would compute per signal.
type stat struct {
	n   int
	sum float64
}

func TestLong(t *testing.T) {
	name := filepath.Join(t.TempDir(), "values.parquet")
	f, err := os.Create(name)
	if err != nil {
		t.Fatal(err)
	}
	l := NewLong(f, map[string]string{"candec.dbc": "x"})
	l.rows = 1000 // several row groups
	want := map[string]stat{}
	labels, j1939 := 0, 0
	decodeIdle(t, func(fr *frame.Frame, iface string, vals []decoder.Value) error {
		for i := range vals {
			v := &vals[i]
			if x, nf := number(v); nf == "" && v.Flags&decoder.Truncated == 0 {
				s := want[v.Signal.FullName()]
				want[v.Signal.FullName()] = stat{s.n + 1, s.sum + x}
			}
			if _, ok := label(v); ok {
				labels++
			}
			if v.Flags&(decoder.J1939|decoder.Truncated) == decoder.J1939 {
				j1939++
			}
		}
		return l.Write(fr, iface, vals)
	})
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	f.Close()
	cols, rows, meta := readRows(t, name)
	wantCols := []string{"time", "bus", "id", "sa", "message", "signal", "value", "nonfinite", "unit", "label", "oor"}
	if !equal(cols, wantCols) {
		t.Fatalf("columns %q, want %q", cols, wantCols)
	}
	if len(rows) != l.Lines() {
		t.Fatalf("got %d rows, want %d", len(rows), l.Lines())
	}
	if meta["candec.dbc"] != "x" {
		t.Errorf("metadata %v, want candec.dbc x", meta)
	}
	got := map[string]stat{}
	gotLabels, gotSA := 0, 0
	for _, row := range rows {
		if row[lTime].Int64() == 0 || string(row[lBus].ByteArray()) != "can0" {
			t.Fatalf("row %v: want a time and bus can0", row)
		}
		if !row[lSA].IsNull() {
			gotSA++
		}
		if !row[lLabel].IsNull() {
			gotLabels++
		}
		if row[lValue].IsNull() {
			continue
		}
		k := string(row[lMessage].ByteArray()) + "." + string(row[lSignal].ByteArray())
		s := got[k]
		got[k] = stat{s.n + 1, s.sum + row[lValue].Double()}
	}
	compareStats(t, got, want)
	// Row groups are encoded concurrently: the file is the same on
	// every run.
	first, _ := os.ReadFile(name)
	for range 3 {
		var b bytes.Buffer
		l := NewLong(&b, map[string]string{"candec.dbc": "x"})
		l.rows = 1000
		decodeIdle(t, l.Write)
		if err := l.Close(); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(b.Bytes(), first) {
			t.Fatal("two writes of the same values differ")
		}
	}
	if gotSA != j1939 {
		t.Errorf("got %d rows with sa, want %d (the J1939 values)", gotSA, j1939)
	}
	if gotLabels != labels || labels == 0 {
		t.Errorf("got %d labels, want %d (more than 0)", gotLabels, labels)
	}
}

func compareStats(t *testing.T, got, want map[string]stat) {
	t.Helper()
	if len(got) != len(want) {
		t.Errorf("got %d signals, want %d", len(got), len(want))
	}
	for k, w := range want {
		g := got[k]
		if g.n != w.n || math.Abs(g.sum-w.sum) > 1e-6*math.Max(1, math.Abs(w.sum)) {
			t.Errorf("%s: got count %d sum %g, want %d %g", k, g.n, g.sum, w.n, w.sum)
		}
	}
}

func equal(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// written is what a lake should hold of the decoded values: per signal
// its stats, per message the out-of-range signals of each row in order
// (nil for none).
type written struct {
	stats map[string]stat
	oor   map[string][][]string
}

// writeLake decodes the idle capture with db (the car's DBC when nil)
// into a lake and closes it, returning what it should hold.
func writeLake(t *testing.T, cfg Config, db *dbc.Database) written {
	t.Helper()
	lk, err := Open(cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer lk.Close()
	w := lk.NewWriter()
	want := written{stats: map[string]stat{}, oor: map[string][][]string{}}
	write := func(fr *frame.Frame, iface string, vals []decoder.Value) error {
		var oor []string
		for i := range vals {
			v := &vals[i]
			if v.Flags&decoder.Truncated == 0 && matches(cfg.Signals, v.Signal) {
				s := want.stats[v.Signal.FullName()]
				want.stats[v.Signal.FullName()] = stat{s.n + 1, s.sum + decoder.Tidy(v)}
				if v.Flags&decoder.OutOfRange != 0 {
					oor = append(oor, v.Signal.Name)
				}
			}
		}
		if len(vals) > 0 {
			m := vals[0].Signal.Message.Name
			want.oor[m] = append(want.oor[m], oor)
		}
		return w.Write(fr, iface, vals)
	}
	if db == nil {
		decodeIdle(t, write)
	} else {
		decodeIdleWith(t, db, write)
	}
	if err := w.Commit("0123456789abcdef"); err != nil {
		t.Fatal(err)
	}
	return want
}

func lakeFiles(t *testing.T, dir string) []string {
	t.Helper()
	var files []string
	filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && filepath.Ext(p) == ".parquet" {
			files = append(files, p)
		}
		if err == nil && !d.IsDir() && filepath.Ext(p) == ".tmp" {
			t.Errorf("temporary file %s left", p)
		}
		return nil
	})
	sort.Strings(files)
	return files
}

// byColumn groups the values of a row by their column: a list column
// has as many values as its list has elements (one null for none).
func byColumn(row parquet.Row, columns int) [][]parquet.Value {
	out := make([][]parquet.Value, columns)
	for _, v := range row {
		out[v.Column()] = append(out[v.Column()], v)
	}
	return out
}

// TestLake writes the idle capture as a lake and reads every table
// back: a file per message under message=…/date=…/, the columns time,
// bus, id, oor and one per signal (int64 for exact signals, float64
// else, a _label column where the signal has a value table), nulls
// where the multiplexer selected another group, the sums of every
// signal, and per row the list of its signals out of range.
func TestLake(t *testing.T) {
	for _, c := range []struct {
		cfg Config
		db  *dbc.Database
	}{
		// Ranges that most values are out of: lists of many names.
		{cfg: Config{DBC: "sha256:1", RowGroupRows: 500}, db: narrowDBC(t)},
		// A small memory bound: the largest table is written early,
		// often. No value is out of range: oor is null throughout.
		{cfg: Config{DBC: "sha256:1", MemoryBytes: 20000}},
	} {
		c.cfg.Dir = filepath.Join(t.TempDir(), "lake")
		checkLake(t, c.cfg, c.db)
	}
}

func checkLake(t *testing.T, cfg Config, db *dbc.Database) {
	dir := cfg.Dir
	want := writeLake(t, cfg, db)
	files := lakeFiles(t, dir)
	if len(files) == 0 {
		t.Fatal("no files")
	}
	got := map[string]stat{}
	sawNull, oorNames, oorRows := false, 0, 0
	for _, name := range files {
		rel, _ := filepath.Rel(dir, name)
		msg := filepath.Base(filepath.Dir(filepath.Dir(rel)))[len("message="):]
		if d := filepath.Base(filepath.Dir(rel)); d != "date=2026-10-09" {
			t.Errorf("%s: partition %s, want date=2026-10-09", rel, d)
		}
		if b := filepath.Base(rel); b != "can0-0123456789abcdef.parquet" {
			t.Errorf("%s: file name %s", rel, b)
		}
		cols, rows, meta := readRows(t, name)
		if meta[MetaMessage] != msg || meta[MetaDBC] != "sha256:1" || meta[MetaBus] != "can0" {
			t.Errorf("%s: metadata %v", rel, meta)
		}
		if !equal(cols[:3], []string{"time", "bus", "id"}) {
			t.Fatalf("%s: columns %q", rel, cols)
		}
		pf := openFile(t, name)
		fields := pf.Schema().Fields()
		if len(rows) != len(want.oor[msg]) {
			t.Fatalf("%s: %d rows, want %d", rel, len(rows), len(want.oor[msg]))
		}
		for r, row := range rows {
			vals := byColumn(row, len(fields))
			for col, leaf := range fields[3:] {
				col += 3
				if leaf.Name() == "oor" {
					var names []string
					for _, v := range vals[col] {
						if !v.IsNull() {
							names = append(names, string(v.ByteArray()))
						}
					}
					if !slices.Equal(names, want.oor[msg][r]) || len(names) == 0 && (len(vals[col]) != 1 || !vals[col][0].IsNull()) {
						t.Fatalf("%s row %d: oor %v, want %q (null for none)", rel, r, vals[col], want.oor[msg][r])
					}
					if len(names) > 0 {
						oorNames += len(names)
						oorRows++
					}
					continue
				}
				v := vals[col][0]
				if v.IsNull() {
					if msg == "BMS_CellVoltages" {
						sawNull = true
					}
					continue
				}
				k := msg + "." + leaf.Name()
				switch leaf.Type().Kind() {
				case parquet.Int64:
					s := got[k]
					got[k] = stat{s.n + 1, s.sum + float64(v.Int64())}
				case parquet.Double:
					s := got[k]
					got[k] = stat{s.n + 1, s.sum + v.Double()}
				}
			}
		}
	}
	compareStats(t, got, want.stats)
	if !sawNull {
		t.Error("no null in the multiplexed BMS_CellVoltages table")
	}
	if db != nil && (oorRows == 0 || oorNames <= oorRows) {
		t.Errorf("%d rows with %d values out of range: want some, with more than one in a row", oorRows, oorNames)
	}
	// A label column per signal with a value table, typed by the rule;
	// oor a list of strings.
	pf := openFile(t, filepath.Join(dir, "message=MCU_MotorStatus", "date=2026-10-09", "can0-0123456789abcdef.parquet"))
	types := map[string]parquet.Kind{}
	for _, f := range pf.Schema().Fields() {
		if f.Leaf() {
			types[f.Name()] = f.Type().Kind()
		}
	}
	if types["MOT_Direction"] != parquet.Int64 || types["MOT_Direction_label"] != parquet.ByteArray || types["MOT_Torque"] != parquet.Double {
		t.Errorf("MCU_MotorStatus columns %v: want MOT_Direction int64 with MOT_Direction_label, MOT_Torque double", types)
	}
	if got, ok := pf.Schema().Lookup("oor", "list", "element"); !ok || got.MaxRepetitionLevel != 1 || got.MaxDefinitionLevel != 2 || got.Node.Type().Kind() != parquet.ByteArray {
		t.Errorf("MCU_MotorStatus oor column %+v: want an optional list of strings", got)
	}
}

func openFile(t *testing.T, name string) *parquet.File {
	t.Helper()
	b, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	pf, err := parquet.OpenFile(bytes.NewReader(b), int64(len(b)))
	if err != nil {
		t.Fatal(err)
	}
	return pf
}

// TestLakeRerun pins the re-run rule: the same input and DBC replace
// their files byte for byte (no rows twice); another DBC or other
// signals are refused; a directory that is no lake is refused.
func TestLakeRerun(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "lake")
	cfg := Config{Dir: dir, DBC: "sha256:1"}
	writeLake(t, cfg, nil)
	first := lakeFiles(t, dir)
	b1, _ := os.ReadFile(first[0])
	writeLake(t, cfg, nil)
	second := lakeFiles(t, dir)
	b2, _ := os.ReadFile(second[0])
	if !equal(first, second) || !bytes.Equal(b1, b2) {
		t.Errorf("a re-run changed the lake: %d files then %d", len(first), len(second))
	}
	for _, c := range []Config{{Dir: dir, DBC: "sha256:2"}, {Dir: dir, DBC: "sha256:1", Signals: []string{"MOT_*"}}} {
		if _, err := Open(c); !errors.Is(err, ErrMixed) {
			t.Errorf("Open(%+v): got %v, want ErrMixed", c, err)
		}
	}
	other := t.TempDir()
	os.WriteFile(filepath.Join(other, "notes.txt"), []byte("x"), 0o644)
	if _, err := Open(Config{Dir: other}); !errors.Is(err, ErrNotLake) {
		t.Errorf("Open on a directory with other files: got %v, want ErrNotLake", err)
	}
}

// TestLakeAbort checks that an aborted input leaves no file, even one
// whose row groups were already written.
func TestLakeAbort(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "lake")
	lk, err := Open(Config{Dir: dir, RowGroupRows: 100})
	if err != nil {
		t.Fatal(err)
	}
	defer lk.Close()
	w := lk.NewWriter()
	decodeIdle(t, w.Write)
	w.Abort()
	if files := lakeFiles(t, dir); len(files) != 0 {
		t.Errorf("files after Abort: %q", files)
	}
}

// temps returns the lake's temporary files.
func temps(t *testing.T, dir string) []string {
	t.Helper()
	got, err := filepath.Glob(filepath.Join(dir, "*", "*", tempPattern))
	if err != nil {
		t.Fatal(err)
	}
	return got
}

// TestLakeLock: while a lake is open, a second Open of it is refused at
// once, naming the lake and the process holding it, and leaves the
// first run's temporary files alone. Once the first is closed without
// committing (as a killed run is), Open takes the lake and removes its
// temporary files, and only those: the committed files and any other
// file stay.
func TestLakeLock(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "lake")
	cfg := Config{Dir: dir, DBC: "sha256:1", RowGroupRows: 100}
	writeLake(t, cfg, nil)
	committed := lakeFiles(t, dir)

	first, err := Open(cfg)
	if err != nil {
		t.Fatal(err)
	}
	w := first.NewWriter()
	decodeIdle(t, w.Write) // row groups written: a temporary file per table
	pending := temps(t, dir)
	if len(pending) == 0 {
		t.Fatal("no temporary file while writing")
	}
	_, err = Open(cfg)
	if !errors.Is(err, ErrBusy) || !strings.Contains(err.Error(), dir) || !strings.Contains(err.Error(), "process "+strconv.Itoa(os.Getpid())) {
		t.Errorf("a second Open: got %v, want ErrBusy naming %s and this process", err, dir)
	}
	if got := temps(t, dir); !slices.Equal(got, pending) {
		t.Errorf("a refused Open changed the temporary files: %d, were %d", len(got), len(pending))
	}
	if err := first.Close(); err != nil {
		t.Fatal(err)
	}

	// Left by the run, and beside them files that are not candec's.
	gone := filepath.Join(dir, "message=Gone", "date=2026-10-09")
	os.MkdirAll(gone, 0o755)
	os.WriteFile(filepath.Join(gone, ".candec-1.tmp"), nil, 0o644)
	others := []string{filepath.Join(filepath.Dir(pending[0]), ".keep"), filepath.Join(filepath.Dir(pending[0]), "notes.tmp"), filepath.Join(dir, ".candec-2.tmp")}
	for _, o := range others {
		os.WriteFile(o, nil, 0o644)
	}
	next, err := Open(cfg)
	if err != nil {
		t.Fatalf("Open after the first run ended: %v", err)
	}
	defer next.Close()
	if next.Removed() != len(pending)+1 {
		t.Errorf("Removed() = %d, want %d", next.Removed(), len(pending)+1)
	}
	if got := temps(t, dir); len(got) != 0 {
		t.Errorf("temporary files left: %q", got)
	}
	if _, err := os.Stat(filepath.Dir(gone)); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the partition of temporary files only is still there (%v)", err)
	}
	for _, o := range others {
		if _, err := os.Stat(o); err != nil {
			t.Errorf("%s, not a lake file, was removed: %v", o, err)
		}
		os.Remove(o)
	}
	if got := lakeFiles(t, dir); !slices.Equal(got, committed) {
		t.Errorf("committed files %q, want %q", got, committed)
	}
	if err := next.Close(); err != nil {
		t.Error(err)
	}
	if err := next.Close(); err != nil {
		t.Errorf("a second Close: %v", err)
	}

	// A run killed after it took the lock of a new lake leaves only the
	// lock file: the directory is still as good as empty.
	fresh := t.TempDir()
	os.WriteFile(filepath.Join(fresh, LockName), []byte("1\n"), 0o644)
	lk, err := Open(Config{Dir: fresh})
	if err != nil {
		t.Fatalf("Open of a directory holding only the lock file: %v", err)
	}
	lk.Close()
}

// holdEnv names, in the process TestLakeLockProcess starts, the lake
// that TestLakeHolder holds.
const holdEnv = "CANDEC_TEST_HOLD_LAKE"

// TestLakeHolder is the process of TestLakeLockProcess: it opens the
// lake, writes row groups of every table without committing them, says
// "ready" and waits to be killed.
func TestLakeHolder(t *testing.T) {
	dir := os.Getenv(holdEnv)
	if dir == "" {
		t.Skip("runs as the process of TestLakeLockProcess")
	}
	lk, err := Open(Config{Dir: dir, DBC: "sha256:1", RowGroupRows: 100})
	if err != nil {
		t.Fatal(err)
	}
	decodeIdle(t, lk.NewWriter().Write)
	fmt.Println("ready")
	io.Copy(io.Discard, os.Stdin) // until killed
}

// TestLakeLockProcess: a lake that another process holds is refused,
// naming that process; once the process is killed mid-run, the lake
// opens and its temporary files are removed.
func TestLakeLockProcess(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "lake")
	cmd := exec.Command(os.Args[0], "-test.run=^TestLakeHolder$")
	cmd.Env = append(os.Environ(), holdEnv+"="+dir)
	cmd.Stderr = os.Stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	defer stdin.Close()
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { cmd.Process.Kill(); cmd.Wait() }()
	if line, err := bufio.NewReader(out).ReadString('\n'); !strings.HasPrefix(line, "ready") {
		t.Fatalf("the holding process said %q (%v), want ready", line, err)
	}
	cfg := Config{Dir: dir, DBC: "sha256:1"}
	_, err = Open(cfg)
	if !errors.Is(err, ErrBusy) || !strings.Contains(err.Error(), "process "+strconv.Itoa(cmd.Process.Pid)) {
		t.Errorf("Open of a lake another process holds: got %v, want ErrBusy naming process %d", err, cmd.Process.Pid)
	}
	pending := temps(t, dir)
	if len(pending) == 0 {
		t.Fatal("the holding process left no temporary file")
	}
	cmd.Process.Kill()
	cmd.Wait()
	lk, err := Open(cfg)
	if err != nil {
		t.Fatalf("Open after the holder was killed: %v", err)
	}
	defer lk.Close()
	if lk.Removed() != len(pending) || len(temps(t, dir)) != 0 {
		t.Errorf("removed %d temporary files, %d left; want %d, none", lk.Removed(), len(temps(t, dir)), len(pending))
	}
}

// TestLakeWriteAllocs pins the writer's steady state: once its tables
// have grown, writing a frame (out-of-range values too) allocates
// nothing.
func TestLakeWriteAllocs(t *testing.T) {
	var frames []decoded
	decodeIdleWith(t, narrowDBC(t), func(f *frame.Frame, _ string, vals []decoder.Value) error {
		frames = append(frames, decoded{*f, slices.Clone(vals)})
		return nil
	})
	lk, err := Open(Config{Dir: t.TempDir(), RowGroupRows: 1 << 30, MemoryBytes: 1 << 40})
	if err != nil {
		t.Fatal(err)
	}
	defer lk.Close()
	w := lk.NewWriter()
	defer w.Abort()
	n := testing.AllocsPerRun(3, func() {
		for i := range frames {
			if err := w.Write(&frames[i].f, "can0", frames[i].vals); err != nil {
				t.Fatal(err)
			}
		}
		for _, tb := range w.order {
			w.drop(tb) // as a row group written
		}
	})
	if n != 0 {
		t.Errorf("writing the idle capture allocates %v times, want 0", n)
	}
}

func TestIntegerColumn(t *testing.T) {
	for _, c := range []struct {
		s    dbc.Signal
		want bool
	}{
		{dbc.Signal{Length: 8, Factor: 1}, true},
		{dbc.Signal{Length: 16, Signed: true, Factor: 2, Offset: -40}, true},
		{dbc.Signal{Length: 8, Factor: 0.5}, false},
		{dbc.Signal{Length: 8, Factor: 1, Offset: 0.5}, false},
		{dbc.Signal{Length: 32, Type: dbc.Float32, Factor: 1}, false},
		{dbc.Signal{Length: 64, Factor: 1}, false},               // unsigned 64-bit: beyond int64
		{dbc.Signal{Length: 62, Factor: 1}, true},                // 2^62-1 fits
		{dbc.Signal{Length: 40, Factor: 1 << 30}, false},         // scaled beyond int64
		{dbc.Signal{Length: 64, Signed: true, Factor: 1}, false}, // kept safe of the edge
	} {
		if got := IntegerColumn(&c.s); got != c.want {
			t.Errorf("IntegerColumn(%+v) = %v, want %v", c.s, got, c.want)
		}
	}
}

// number returns v as the lake stores it, by the number rule of the
// JSON lines (decoder.Tidy), or, for NaN and ±Inf, the nonfinite name
// that stands for it: the reference the writers are checked against.
func number(v *decoder.Value) (float64, string) {
	switch {
	case v.Flags&decoder.Unsigned != 0:
		return float64(v.Uint()), ""
	case v.Flags&decoder.Exact != 0:
		return float64(v.Int), ""
	case math.IsNaN(v.Phys) || math.IsInf(v.Phys, 0):
		return 0, envelope.NonFinite(v.Phys)
	}
	return decoder.Tidy(v), ""
}

// TestWriterReused checks that a Writer used for several inputs in turn
// (an input aborted, then two committed) writes each input's files as a
// Writer of its own would, byte for byte, although its tables take over
// the buffers and Parquet writers of the input before.
func TestWriterReused(t *testing.T) {
	// Small row groups and memory: the memory bound decides where row
	// groups end, so an aborted input's rows must not count on.
	cfg := func(dir string) Config { return Config{Dir: dir, RowGroupRows: 500, MemoryBytes: 64 << 10} }
	fresh, reused := filepath.Join(t.TempDir(), "fresh"), filepath.Join(t.TempDir(), "reused")
	for _, input := range []string{"aaaaaaaaaaaaaaaa", "bbbbbbbbbbbbbbbb"} {
		lk, err := Open(cfg(fresh))
		if err != nil {
			t.Fatal(err)
		}
		w := lk.NewWriter()
		decodeIdle(t, w.Write)
		if err := w.Commit(input); err != nil {
			t.Fatal(err)
		}
		if err := lk.Close(); err != nil {
			t.Fatal(err)
		}
	}
	lk, err := Open(cfg(reused))
	if err != nil {
		t.Fatal(err)
	}
	defer lk.Close()
	w := lk.NewWriter()
	n := 0
	decodeIdle(t, func(f *frame.Frame, iface string, vals []decoder.Value) error {
		if n++; n < 30000 {
			return w.Write(f, iface, vals)
		}
		return nil
	})
	w.Abort()
	for _, input := range []string{"aaaaaaaaaaaaaaaa", "bbbbbbbbbbbbbbbb"} {
		decodeIdle(t, w.Write)
		if err := w.Commit(input); err != nil {
			t.Fatal(err)
		}
	}
	want, got := lakeFiles(t, fresh), lakeFiles(t, reused)
	if len(got) != len(want) || len(want) == 0 {
		t.Fatalf("got %d files, want %d", len(got), len(want))
	}
	for i := range want {
		a, _ := os.ReadFile(want[i])
		b, _ := os.ReadFile(got[i])
		if rel, _ := filepath.Rel(fresh, want[i]); !bytes.Equal(a, b) {
			t.Errorf("%s differs from the file a Writer of its own writes", rel)
		}
	}
}

// TestPolicyColumn: with Config.PolicyColumn every table has the INT64
// column policy_version after id, each row the version set when it was
// written (across row groups, a small one forcing several); without it
// a table has no such column.
func TestPolicyColumn(t *testing.T) {
	for _, on := range []bool{true, false} {
		dir := filepath.Join(t.TempDir(), "lake")
		lk, err := Open(Config{Dir: dir, DBC: "sha256:1", PolicyColumn: on, RowGroupRows: 50})
		if err != nil {
			t.Fatal(err)
		}
		w := lk.NewWriter()
		var versions []int64 // by row written, of MCU_MotorStatus
		n := 0
		decodeIdle(t, func(f *frame.Frame, iface string, vals []decoder.Value) error {
			n++
			v := uint64(n / 100 % 3) // 0, then 1, 2, 0, … in runs of 100 frames
			w.SetPolicyVersion(v)
			if len(vals) > 0 && vals[0].Signal.Message.Name == "MCU_MotorStatus" {
				versions = append(versions, int64(v))
			}
			return w.Write(f, iface, vals)
		})
		if err := w.Commit("0123456789abcdef"); err != nil {
			t.Fatal(err)
		}
		lk.Close()
		files, err := filepath.Glob(filepath.Join(dir, "message=MCU_MotorStatus", "*", "*.parquet"))
		if err != nil || len(files) != 1 {
			t.Fatalf("files %v, %v", files, err)
		}
		cols, rows, _ := readRows(t, files[0])
		at := slices.Index(cols, PolicyColumn)
		if !on {
			if at >= 0 {
				t.Errorf("columns %v: policy_version without PolicyColumn", cols)
			}
			continue
		}
		if at != 3 || len(rows) != len(versions) {
			t.Fatalf("columns %v, %d rows; want policy_version 4th, %d rows", cols, len(rows), len(versions))
		}
		for i, row := range rows {
			if got := byColumn(row, len(cols))[at][0].Int64(); got != versions[i] {
				t.Fatalf("row %d: policy_version %d, want %d", i, got, versions[i])
			}
		}
	}
}
