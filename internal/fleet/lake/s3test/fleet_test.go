package s3test

import (
	"database/sql"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/yukart/candec/capture"
	"github.com/yukart/candec/dbc"
	"github.com/yukart/candec/decoder"
	"github.com/yukart/candec/frame"
	"github.com/yukart/candec/internal/fleet/lake"
	"github.com/yukart/candec/internal/fleet/lake/s3store"
)

// written is what a test wrote per vehicle: the rows of each message
// and the aggregate of each "message.signal".
type written struct {
	rows map[string]int64
	sigs map[string]*agg
}

// testFleetLake writes the kart's capture into a lake in the bucket
// through lake.Open with the S3 store, as candec ingest does: a Writer
// per vehicle (a vehicle= partition, one of them a hostile id that
// must stay a name), then reads the objects back with DuckDB and
// checks, per vehicle and message, the rows, and per signal the count,
// min and max, against what was written.
func testFleetLake(t *testing.T, srv *server) {
	st, err := open(t, srv, "s3://lake/cars", writerKey, writerSecret, s3store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	lk, err := lake.Open(lake.Config{Dir: st.String(), Store: st, Owner: "ingest1", DBC: "yukart"})
	if err != nil {
		t.Fatal(err)
	}
	defer lk.Close()
	// Every frame to kart01, every third to the hostile id.
	vehicles := []string{"kart01", "../kart01"}
	writers := map[string]*lake.Writer{}
	want := map[string]*written{}
	for _, v := range vehicles {
		writers[v] = lk.NewWriterIn("vehicle=" + lake.Escape(v))
	}
	want["kart01"] = writeCapture(t, writers["kart01"], 1)
	want["../kart01"] = writeCapture(t, writers["../kart01"], 3)
	var committed []string
	for _, v := range vehicles {
		if err := writers[v].Commit("ingest1-000001"); err != nil {
			t.Fatalf("commit %s: %v", v, err)
		}
		committed = append(committed, writers[v].Committed()...)
	}
	// What the writers say they committed is what the bucket holds.
	slices.Sort(committed)
	got, err := st.List("")
	if err != nil {
		t.Fatal(err)
	}
	if want := append([]string{lake.MarkerName}, committed...); !slices.Equal(got, slices.Sorted(slices.Values(want))) {
		t.Errorf("the bucket holds %q, the writers committed %q", got, committed)
	}
	for _, c := range committed {
		if !strings.HasPrefix(c, "vehicle=kart01/") && !strings.HasPrefix(c, "vehicle=%2E.%2Fkart01/") {
			t.Errorf("committed %q: not under a vehicle= partition of the ids, escaped", c)
		}
	}

	dir := t.TempDir()
	download(t, srv, "cars", dir)
	checkFleet(t, dir, want)
}

// writeCapture decodes every nth frame of the kart's capture into w,
// uncommitted, and returns what it wrote.
func writeCapture(t *testing.T, w *lake.Writer, every int) *written {
	t.Helper()
	db, err := dbc.Load(filepath.Join(root, "testdata", "yukart.dbc"))
	if err != nil {
		t.Fatal(err)
	}
	src, err := capture.Open(filepath.Join(root, "testdata", "idle.log"), capture.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	wrote := &written{rows: map[string]int64{}, sigs: map[string]*agg{}}
	dec := decoder.New(db)
	var f frame.Frame
	var vals []decoder.Value
	for n := 0; ; n++ {
		if err := src.Next(&f); errors.Is(err, io.EOF) {
			return wrote
		} else if err != nil {
			t.Fatal(err)
		}
		var m *dbc.Message
		if m, vals = dec.Decode(&f, vals[:0]); m == nil || len(vals) == 0 || n%every != 0 {
			continue
		}
		if err := w.Write(&f, src.Interface(f.Bus), vals); err != nil {
			t.Fatal(err)
		}
		wrote.add(m, vals)
	}
}

func (w *written) add(m *dbc.Message, vals []decoder.Value) {
	w.rows[m.Name]++
	for _, v := range vals {
		if v.Flags&decoder.Truncated != 0 {
			continue
		}
		k := m.Name + "." + v.Signal.Name
		a := w.sigs[k]
		if a == nil {
			a = &agg{}
			w.sigs[k] = a
		}
		a.add(decoder.Tidy(&v)) // the value as candec writes it, everywhere
	}
}

// checkFleet asks DuckDB, of the fleet lake in dir, the rows per
// vehicle and message and each signal's count, min and max per
// vehicle, and compares them with what was written.
func checkFleet(t *testing.T, dir string, want map[string]*written) {
	t.Helper()
	db, err := sql.Open("duckdb", "")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	all := fmt.Sprintf("read_parquet('%s/*/*/*/*.parquet', hive_partitioning = true, union_by_name = true)", dir)
	rows, err := db.Query(fmt.Sprintf("SELECT vehicle, message, count(*) FROM %s GROUP BY ALL", all))
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]int64{}
	for rows.Next() {
		var v, m string
		var n int64
		if err := rows.Scan(&v, &m, &n); err != nil {
			t.Fatal(err)
		}
		got[v+"/"+m] = n
	}
	rows.Close()
	tables := 0
	for v, w := range want {
		for m, n := range w.rows {
			tables++
			if g := got[v+"/"+m]; g != n {
				t.Errorf("vehicle %q, message %s: %d rows, want %d", v, m, g, n)
			}
		}
	}
	if len(got) != tables || tables < 27*len(want) {
		t.Errorf("DuckDB sees %d (vehicle, message) tables, %d were written", len(got), tables)
	}
	checked := 0
	for v, w := range want {
		for m := range w.rows {
			table := fmt.Sprintf("read_parquet('%s/vehicle=%s/message=%s/*/*.parquet', hive_partitioning = false)", dir, lake.Escape(v), m)
			for _, n := range signalColumns(t, db, table) {
				a := w.sigs[m+"."+n]
				var cnt int64
				var mn, mx sql.NullFloat64
				q := fmt.Sprintf(`SELECT count("%[1]s"), min("%[1]s")::DOUBLE, max("%[1]s")::DOUBLE FROM %[2]s`, n, table)
				if err := db.QueryRow(q).Scan(&cnt, &mn, &mx); err != nil {
					t.Fatalf("%s: %v", q, err)
				}
				if a == nil {
					if cnt != 0 {
						t.Errorf("vehicle %q, %s.%s: %d values in the lake, none written", v, m, n, cnt)
					}
					continue
				}
				if cnt != a.n || !near(mn.Float64, a.min) || !near(mx.Float64, a.max) {
					t.Errorf("vehicle %q, %s.%s: lake count %d min %g max %g, written %d %g %g", v, m, n, cnt, mn.Float64, mx.Float64, a.n, a.min, a.max)
				}
				checked++
			}
		}
	}
	sigs := 0
	for _, w := range want {
		sigs += len(w.sigs)
	}
	if checked != sigs {
		t.Errorf("checked %d signals in the lake, %d were written", checked, sigs)
	}
}
