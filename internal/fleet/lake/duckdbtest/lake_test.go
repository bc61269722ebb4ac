package duckdbtest

import (
	"bufio"
	"database/sql"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	_ "github.com/duckdb/duckdb-go/v2"
)

// root is the candec repository, three levels up.
var root = filepath.Join("..", "..", "..", "..")

// realData returns the shared reference data (the directory named by
// CANDEC_REALDATA, or ../shared/realdata beside the repository), or
// skips the test when it is absent, as internal/testkit/realdata does.
func realData(t *testing.T) string {
	t.Helper()
	d := os.Getenv("CANDEC_REALDATA")
	if d == "" {
		d = filepath.Join(root, "..", "shared", "realdata")
	}
	if fi, err := os.Stat(filepath.Join(d, "logs", "rav4_2017_highway_1min.log")); err != nil || fi.IsDir() {
		t.Skip("reference data not present (set CANDEC_REALDATA or place it at ../shared/realdata)")
	}
	return d
}

// candec builds the candec binary into a temporary directory.
func candec(t *testing.T) string {
	t.Helper()
	exe := filepath.Join(t.TempDir(), "candec")
	cmd := exec.Command("go", "build", "-o", exe, "./cmd/candec")
	cmd.Dir = root
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("build candec: %v\n%s", err, out)
	}
	return exe
}

func runCandec(t *testing.T, exe string, args ...string) {
	t.Helper()
	out, err := exec.Command(exe, args...).CombinedOutput()
	if err != nil {
		t.Fatalf("candec %s: %v\n%s", strings.Join(args, " "), err, out)
	}
}

// agg is what the test computes per signal from the JSON lines and
// asks DuckDB for.
type agg struct {
	n             int64
	min, max, sum float64
}

func (a *agg) add(x float64) {
	if a.n == 0 || x < a.min {
		a.min = x
	}
	if a.n == 0 || x > a.max {
		a.max = x
	}
	a.n++
	a.sum += x
}

func (a agg) avg() float64 { return a.sum / float64(a.n) }

func near(a, b float64) bool {
	return math.Abs(a-b) <= 1e-9*math.Max(1, math.Max(math.Abs(a), math.Abs(b)))
}

// fromJSON reads candec's JSON lines: per "message.signal" its
// aggregate and its values out of range, per message its frames (lines
// of one frame are consecutive and share t, bus and id), and the
// frames with a value out of range.
func fromJSON(t *testing.T, name string) (sigs map[string]*agg, frames map[string]int64, lines int64, oor map[string]int64, oorFrames int64) {
	t.Helper()
	f, err := os.Open(name)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sigs, frames, oor = map[string]*agg{}, map[string]int64{}, map[string]int64{}
	prev, prevOOR := "", ""
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var l struct {
			TS     int64    `json:"ts"`
			Bus    string   `json:"bus"`
			ID     uint32   `json:"id"`
			Signal string   `json:"signal"`
			Value  *float64 `json:"value"`
			OOR    bool     `json:"oor"`
		}
		if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
			t.Fatal(err)
		}
		lines++
		msg, _, _ := strings.Cut(l.Signal, ".")
		key := fmt.Sprint(l.TS, l.Bus, l.ID, msg)
		if key != prev {
			frames[msg]++
			prev = key
		}
		if l.OOR {
			oor[l.Signal]++
			if key != prevOOR {
				oorFrames++
				prevOOR = key
			}
		}
		if l.Value == nil {
			continue
		}
		a := sigs[l.Signal]
		if a == nil {
			a = &agg{}
			sigs[l.Signal] = a
		}
		a.add(*l.Value)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return sigs, frames, lines, oor, oorFrames
}

// TestRAV4Lake decodes the shared RAV4 log with its two DBCs (the
// powertrain bus on can0, the radar on can1) into a lake, a long file
// and JSON lines, and checks with DuckDB: the rows of every table
// against the frames of the JSON lines; count, min, max and avg of every
// signal in the lake and in the long file against the JSON lines; and
// that a query filtered on a partition reads that partition's files
// only; and the oor lists of the lake's rows against the values the
// JSON lines mark "oor".
func TestRAV4Lake(t *testing.T) {
	rd := realData(t)
	exe := candec(t)
	dir := t.TempDir()
	lake, long, jsonl := filepath.Join(dir, "lake"), filepath.Join(dir, "values.parquet"), filepath.Join(dir, "values.jsonl")
	log := filepath.Join(rd, "logs", "rav4_2017_highway_1min.log")
	dbcs := []string{"--dbc", "can0=" + filepath.Join(rd, "dbc", "toyota_new_mc_pt_generated.dbc"),
		"--dbc", "can1=" + filepath.Join(rd, "dbc", "toyota_adas.dbc")}
	runCandec(t, exe, append(append([]string{"decode"}, dbcs...), "--out-dir", lake, log)...)
	runCandec(t, exe, append(append([]string{"decode"}, dbcs...), "--format", "parquet", "-o", long, log)...)
	runCandec(t, exe, append(append([]string{"decode"}, dbcs...), "-o", jsonl, log)...)
	sigs, frames, lines, oor, oorFrames := fromJSON(t, jsonl)
	if len(sigs) < 100 || lines < 400000 {
		t.Fatalf("the JSON lines hold %d signals in %d lines: want the whole log", len(sigs), lines)
	}

	db, err := sql.Open("duckdb", "")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	all := fmt.Sprintf("read_parquet('%s/*/*/*.parquet', hive_partitioning = true, union_by_name = true)", lake)

	// Row counts: a table per message, a row per frame.
	rows, err := db.Query(fmt.Sprintf("SELECT message, count(*) FROM %s GROUP BY message ORDER BY message", all))
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]int64{}
	for rows.Next() {
		var m string
		var n int64
		if err := rows.Scan(&m, &n); err != nil {
			t.Fatal(err)
		}
		got[m] = n
	}
	rows.Close()
	if len(got) != len(frames) {
		t.Errorf("lake has %d tables, the JSON lines %d messages", len(got), len(frames))
	}
	for m, n := range frames {
		if got[m] != n {
			t.Errorf("table %s: %d rows, want %d frames", m, got[m], n)
		}
	}

	// Per signal, in the lake: a column of its message's table.
	checked := 0
	for m := range frames {
		table := fmt.Sprintf("read_parquet('%s/message=%s/*/*.parquet', hive_partitioning = false)", lake, m)
		cols, err := db.Query(fmt.Sprintf("SELECT column_name, column_type FROM (DESCRIBE SELECT * FROM %s)", table))
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for cols.Next() {
			var n, typ string
			cols.Scan(&n, &typ)
			if n == "time" || n == "bus" || n == "id" || n == "sa" || n == "oor" && typ == "VARCHAR[]" || strings.HasSuffix(n, "_label") && typ == "VARCHAR" {
				continue
			}
			if typ != "BIGINT" && typ != "DOUBLE" {
				t.Errorf("%s.%s is %s, want BIGINT or DOUBLE", m, n, typ)
			}
			names = append(names, n)
		}
		cols.Close()
		for _, n := range names {
			want := sigs[m+"."+n]
			var g agg
			var mn, mx, avg sql.NullFloat64
			q := fmt.Sprintf(`SELECT count("%[1]s"), min("%[1]s")::DOUBLE, max("%[1]s")::DOUBLE, avg("%[1]s") FROM %[2]s`, n, table)
			if err := db.QueryRow(q).Scan(&g.n, &mn, &mx, &avg); err != nil {
				t.Fatalf("%s: %v", q, err)
			}
			if want == nil {
				if g.n != 0 {
					t.Errorf("%s.%s: %d values in the lake, none in the JSON lines", m, n, g.n)
				}
				continue
			}
			if g.n != want.n || !near(mn.Float64, want.min) || !near(mx.Float64, want.max) || !near(avg.Float64, want.avg()) {
				t.Errorf("%s.%s: lake count %d min %g max %g avg %g, JSON lines %d %g %g %g",
					m, n, g.n, mn.Float64, mx.Float64, avg.Float64, want.n, want.min, want.max, want.avg())
			}
			checked++
		}
	}
	if checked != len(sigs) {
		t.Errorf("checked %d signals in the lake, the JSON lines have %d", checked, len(sigs))
	}

	// Per signal, in the long file; and its row count.
	var n int64
	if err := db.QueryRow(fmt.Sprintf("SELECT count(*) FROM '%s'", long)).Scan(&n); err != nil || n != lines {
		t.Errorf("long file: %d rows (%v), want %d (the JSON lines)", n, err, lines)
	}
	rows, err = db.Query(fmt.Sprintf("SELECT message || '.' || signal, count(value), min(value), max(value), avg(value) FROM '%s' GROUP BY ALL", long))
	if err != nil {
		t.Fatal(err)
	}
	seen := 0
	for rows.Next() {
		var s string
		var g agg
		var mn, mx, avg sql.NullFloat64
		if err := rows.Scan(&s, &g.n, &mn, &mx, &avg); err != nil {
			t.Fatal(err)
		}
		want := sigs[s]
		if want == nil || g.n != want.n || !near(mn.Float64, want.min) || !near(mx.Float64, want.max) || !near(avg.Float64, want.avg()) {
			t.Errorf("long %s: count %d min %g max %g avg %g, JSON lines %+v", s, g.n, mn.Float64, mx.Float64, avg.Float64, want)
		}
		seen++
	}
	rows.Close()
	if seen != len(sigs) {
		t.Errorf("long file has %d signals, the JSON lines %d", seen, len(sigs))
	}

	// A filter on a partition reads that partition only: DuckDB prunes
	// the files by their path before it opens one.
	files, err := filepath.Glob(filepath.Join(lake, "*", "*", "*.parquet"))
	if err != nil || len(files) < 10 {
		t.Fatalf("%d files in the lake (%v)", len(files), err)
	}
	for _, c := range []struct {
		where string
		files int
	}{
		{"", len(files)}, // the check itself: without a filter, every file
		{"WHERE message = 'WHEEL_SPEEDS'", 1},
		{"WHERE message = 'WHEEL_SPEEDS' AND date = DATE '1970-01-01'", 1},
		{"WHERE date = DATE '2020-01-01'", 0},
	} {
		plan := explain(t, db, fmt.Sprintf("SELECT count(*) FROM %s %s", all, c.where))
		if want := fmt.Sprintf("Total Files Read: %d", c.files); !strings.Contains(plan, want) {
			t.Errorf("the plan of a query %s lacks %q (of %d files):\n%s", c.where, want, len(files), plan)
		}
	}
	var wheel int64
	if err := db.QueryRow(fmt.Sprintf("SELECT count(*) FROM %s WHERE message = 'WHEEL_SPEEDS'", all)).Scan(&wheel); err != nil || wheel != frames["WHEEL_SPEEDS"] {
		t.Errorf("WHEEL_SPEEDS: %d rows (%v), want %d", wheel, err, frames["WHEEL_SPEEDS"])
	}
	// Out of range: per row, the list of its signals' columns whose
	// value was out of range, NULL when none (never an empty list).
	checkOOR(t, db, all, oor, oorFrames)

	// The partition columns are typed: the date is a DATE.
	var typ string
	if err := db.QueryRow(fmt.Sprintf("SELECT typeof(date) FROM %s LIMIT 1", all)).Scan(&typ); err != nil || typ != "DATE" {
		t.Errorf("date partition is %q (%v), want DATE", typ, err)
	}
}

// checkOOR checks the lake's oor lists against the values the JSON
// lines mark out of range: as many names as "oor":true lines, per
// signal, and a non-NULL list in as many rows as frames with such a
// value.
func checkOOR(t *testing.T, db *sql.DB, all string, want map[string]int64, wantFrames int64) {
	t.Helper()
	var total int64
	for _, n := range want {
		total += n
	}
	if total < 1000 {
		t.Fatalf("the JSON lines mark %d values out of range: want the whole log", total)
	}
	var typ string
	if err := db.QueryRow(fmt.Sprintf("SELECT any_value(typeof(oor)) FROM %s", all)).Scan(&typ); err != nil || typ != "VARCHAR[]" {
		t.Errorf("oor is %q (%v), want VARCHAR[]", typ, err)
	}
	var names, rows, empty int64
	q := fmt.Sprintf("SELECT coalesce(sum(len(oor)), 0), count(oor), count(*) FILTER (WHERE len(oor) = 0) FROM %s", all)
	if err := db.QueryRow(q).Scan(&names, &rows, &empty); err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	if names != total || rows != wantFrames || empty != 0 {
		t.Errorf("lake: %d names out of range in %d rows (%d empty lists); JSON lines: %d in %d frames (want no empty list)",
			names, rows, empty, total, wantFrames)
	}
	got := map[string]int64{}
	r, err := db.Query(fmt.Sprintf("SELECT message || '.' || s, count(*) FROM (SELECT message, unnest(oor) AS s FROM %s) GROUP BY ALL", all))
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	for r.Next() {
		var s string
		var n int64
		if err := r.Scan(&s, &n); err != nil {
			t.Fatal(err)
		}
		got[s] = n
	}
	if len(got) != len(want) {
		t.Errorf("lake: %d signals out of range, JSON lines %d", len(got), len(want))
	}
	for s, n := range want {
		if got[s] != n {
			t.Errorf("%s: out of range %d times in the lake, %d in the JSON lines", s, got[s], n)
		}
	}
	// A filter on one signal out of range, as a user would write it.
	var yaw int64
	q = fmt.Sprintf("SELECT count(*) FROM %s WHERE message = 'KINEMATICS' AND list_contains(oor, 'YAW_RATE')", all)
	if err := db.QueryRow(q).Scan(&yaw); err != nil || yaw != want["KINEMATICS.YAW_RATE"] {
		t.Errorf("%s: %d (%v), want %d", q, yaw, err, want["KINEMATICS.YAW_RATE"])
	}
}

// explain returns the text of DuckDB's EXPLAIN ANALYZE of q.
func explain(t *testing.T, db *sql.DB, q string) string {
	t.Helper()
	rows, err := db.Query("EXPLAIN ANALYZE " + q)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var plan strings.Builder
	for rows.Next() {
		var k, v string
		if err := rows.Scan(&k, &v); err != nil {
			t.Fatal(err)
		}
		plan.WriteString(v)
	}
	return plan.String()
}
