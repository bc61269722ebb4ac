package s3test

import (
	"bufio"
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	_ "github.com/duckdb/duckdb-go/v2"
	"github.com/minio/minio-go/v7"

	"github.com/yukart/candec/internal/fleet/lake"
)

// root is the candec repository, three levels up.
var root = func() string {
	r, err := filepath.Abs(filepath.Join("..", "..", "..", ".."))
	if err != nil {
		panic(err)
	}
	return r
}()

// TestS3 runs against one server: the store's files, its refusals, a
// fleet's lake written through lake.Open with the store, the lake
// candec's ingest writes there from a real broker (in process, and
// candec ingest --out-dir s3://… ended by SIGTERM), and candec decode
// --out-dir s3://…, each read back with DuckDB.
func TestS3(t *testing.T) {
	srv := startServer(t)
	t.Run("StoreFiles", func(t *testing.T) { testStoreFiles(t, srv) })
	t.Run("StoreRefuses", func(t *testing.T) { testStoreRefuses(t, srv) })
	t.Run("FleetLake", func(t *testing.T) { testFleetLake(t, srv) })
	t.Run("IngestLake", func(t *testing.T) { testIngestLake(t, srv) })
	exe := candec(t)
	t.Run("DecodeLake", func(t *testing.T) { testDecodeLake(t, srv, exe) })
	t.Run("DecodeRefused", func(t *testing.T) { testDecodeRefused(t, srv, exe) })
	t.Run("IngestSIGTERM", func(t *testing.T) { testIngestSIGTERM(t, srv, exe) })
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

// runCandec runs candec with the AWS variables of env added, in a
// directory of its own (a decode that took s3://… for a directory
// would write there); it returns its output and error.
func runCandec(exe string, env map[string]string, args ...string) (string, error) {
	cmd := exec.Command(exe, args...)
	cmd.Dir = filepath.Dir(exe)
	cmd.Env = os.Environ()
	for k, v := range env {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// agg is what a test computes per signal from what was written (the
// JSON lines of a decode, or the values it wrote) and asks DuckDB for.
type agg struct {
	n        int64
	min, max float64
}

func (a *agg) add(x float64) {
	if a.n == 0 || x < a.min {
		a.min = x
	}
	if a.n == 0 || x > a.max {
		a.max = x
	}
	a.n++
}

func near(a, b float64) bool {
	return math.Abs(a-b) <= 1e-9*math.Max(1, math.Max(math.Abs(a), math.Abs(b)))
}

// fromJSON reads candec's JSON lines: per "message.signal" its
// aggregate, per message its frames (lines of one frame are
// consecutive and share t, bus and id).
func fromJSON(t *testing.T, name string) (sigs map[string]*agg, frames map[string]int64) {
	t.Helper()
	f, err := os.Open(name)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sigs, frames = map[string]*agg{}, map[string]int64{}
	prev := ""
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var l struct {
			TS     int64    `json:"ts"`
			Bus    string   `json:"bus"`
			ID     uint32   `json:"id"`
			Signal string   `json:"signal"`
			Value  *float64 `json:"value"`
		}
		if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
			t.Fatal(err)
		}
		msg, _, _ := strings.Cut(l.Signal, ".")
		if key := fmt.Sprint(l.TS, l.Bus, l.ID, msg); key != prev {
			frames[msg]++
			prev = key
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
	return sigs, frames
}

// download copies every object under prefix into dir, by its name
// below the prefix: DuckDB's httpfs extension would read the bucket in
// place, but it is a download of its own, and the test runs offline.
func download(t *testing.T, srv *server, prefix, dir string) []string {
	t.Helper()
	c := srv.client(writerKey, writerSecret)
	var rels []string
	for _, k := range srv.keys(prefix + "/") {
		rel := strings.TrimPrefix(k, prefix+"/")
		if err := c.FGetObject(context.Background(), bucket, k, filepath.Join(dir, filepath.FromSlash(rel)), minio.GetObjectOptions{}); err != nil {
			t.Fatalf("download %s: %v", k, err)
		}
		rels = append(rels, rel)
	}
	return rels
}

// testDecodeLake decodes the kart's capture with candec decode
// --out-dir s3://lake/kart (the lake through its S3 store), downloads
// the objects, and checks with DuckDB, against the JSON lines of the
// same decode: the rows of every message, and the count, min and max
// of every signal. A decode with other DBC files into the same prefix
// is then refused (the marker, read from the bucket), and a second
// decode of the same capture leaves the same lake.
func testDecodeLake(t *testing.T, srv *server, exe string) {
	dir := t.TempDir()
	capture, dbc := filepath.Join(root, "testdata", "idle.log"), filepath.Join(root, "testdata", "yukart.dbc")
	env := srv.env(writerKey, writerSecret)
	if out, err := runCandec(exe, env, "decode", "--dbc", dbc, "--out-dir", "s3://lake/kart", capture); err != nil {
		t.Fatalf("candec decode --out-dir s3://lake/kart: %v\n%s", err, out)
	}
	jsonl := filepath.Join(dir, "values.jsonl")
	if out, err := runCandec(exe, nil, "decode", "--dbc", dbc, "-o", jsonl, capture); err != nil {
		t.Fatalf("candec decode -o: %v\n%s", err, out)
	}
	sigs, frames := fromJSON(t, jsonl)
	if len(frames) != 27 || len(sigs) < 100 {
		t.Fatalf("the JSON lines hold %d messages and %d signals: want the whole capture", len(frames), len(sigs))
	}

	local := filepath.Join(dir, "lake")
	rels := download(t, srv, "kart", local)
	parquet := 0
	for _, r := range rels {
		switch {
		case r == lake.MarkerName:
		case strings.HasPrefix(r, "message=") && strings.HasSuffix(r, ".parquet"):
			parquet++
		default:
			t.Errorf("unexpected object kart/%s", r)
		}
	}
	if parquet != len(frames) || !slices.Contains(rels, lake.MarkerName) {
		t.Errorf("objects under kart/: %q; want the marker and a table per message (%d)", rels, len(frames))
	}
	checkLake(t, local, sigs, frames)

	if out, err := runCandec(exe, env, "decode", "--dbc", filepath.Join(root, "testdata", "mix3.dbc"), "--out-dir", "s3://lake/kart", capture); err == nil ||
		!strings.Contains(out, "s3://lake/kart") {
		t.Errorf("a decode with other DBC files into the lake: %v\n%s\nwant it refused, naming the lake", err, out)
	}
	if out, err := runCandec(exe, env, "decode", "--dbc", dbc, "--out-dir", "s3://lake/kart", capture); err != nil {
		t.Fatalf("the decode again: %v\n%s", err, out)
	}
	again := filepath.Join(dir, "again")
	if got := download(t, srv, "kart", again); !slices.Equal(got, rels) {
		t.Errorf("after the decode again: %q, want %q", got, rels)
	}
	checkLake(t, again, sigs, frames)
}

// checkLake asks DuckDB, of the lake in dir, the rows per message and
// the count, min and max of each signal, and compares them with what
// was written: the frames per message, the aggregate per signal.
func checkLake(t *testing.T, dir string, sigs map[string]*agg, frames map[string]int64) {
	t.Helper()
	db, err := sql.Open("duckdb", "")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	all := fmt.Sprintf("read_parquet('%s/*/*/*.parquet', hive_partitioning = true, union_by_name = true)", dir)
	rows, err := db.Query(fmt.Sprintf("SELECT message, count(*) FROM %s GROUP BY message", all))
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
		t.Errorf("the lake has %d tables, want %d (a table per message)", len(got), len(frames))
	}
	for m, n := range frames {
		if got[m] != n {
			t.Errorf("table %s: %d rows, want %d frames", m, got[m], n)
		}
	}
	checked := 0
	for m := range frames {
		table := fmt.Sprintf("read_parquet('%s/message=%s/*/*.parquet', hive_partitioning = false)", dir, m)
		for _, n := range signalColumns(t, db, table) {
			want := sigs[m+"."+n]
			var cnt int64
			var mn, mx sql.NullFloat64
			q := fmt.Sprintf(`SELECT count("%[1]s"), min("%[1]s")::DOUBLE, max("%[1]s")::DOUBLE FROM %[2]s`, n, table)
			if err := db.QueryRow(q).Scan(&cnt, &mn, &mx); err != nil {
				t.Fatalf("%s: %v", q, err)
			}
			if want == nil {
				if cnt != 0 {
					t.Errorf("%s.%s: %d values in the lake, none written", m, n, cnt)
				}
				continue
			}
			if cnt != want.n || !near(mn.Float64, want.min) || !near(mx.Float64, want.max) {
				t.Errorf("%s.%s: lake count %d min %g max %g, want %d %g %g", m, n, cnt, mn.Float64, mx.Float64, want.n, want.min, want.max)
			}
			checked++
		}
	}
	if checked != len(sigs) {
		t.Errorf("checked %d signals in the lake, want %d", checked, len(sigs))
	}
}

// signalColumns names the signal columns of a table: all but the
// frame's (time, bus, id, sa), an ingest's policy_version, the oor
// list and the labels.
func signalColumns(t *testing.T, db *sql.DB, table string) []string {
	t.Helper()
	rows, err := db.Query(fmt.Sprintf("SELECT column_name, column_type FROM (DESCRIBE SELECT * FROM %s)", table))
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var names []string
	for rows.Next() {
		var n, typ string
		if err := rows.Scan(&n, &typ); err != nil {
			t.Fatal(err)
		}
		if n == "time" || n == "bus" || n == "id" || n == "sa" || n == "policy_version" && typ == "BIGINT" ||
			n == "oor" && typ == "VARCHAR[]" || strings.HasSuffix(n, "_label") && typ == "VARCHAR" {
			continue
		}
		names = append(names, n)
	}
	return names
}

// testDecodeRefused: a decode into a store that refuses its writes
// (read-only credentials) or has no such bucket fails, naming the lake
// or the object and the reason, and leaves nothing in the bucket.
func testDecodeRefused(t *testing.T, srv *server, exe string) {
	capture, dbc := filepath.Join(root, "testdata", "idle.log"), filepath.Join(root, "testdata", "yukart.dbc")
	for _, c := range []struct {
		name, url string
		env       map[string]string
		want      []string
	}{
		{"read-only credentials", "s3://lake/refused", srv.env(readerKey, readerSecret),
			[]string{"put s3://lake/refused/" + lake.MarkerName, "AccessDenied (403)"}},
		{"no such bucket", "s3://no-such-bucket/kart", srv.env(writerKey, writerSecret),
			[]string{`open s3://no-such-bucket/kart: no such bucket "no-such-bucket"`}},
		{"wrong secret", "s3://lake/refused", srv.env(writerKey, "wrong"),
			[]string{"open s3://lake/refused: AccessDenied (403)"}},
		{"no credentials", "s3://lake/refused", map[string]string{"AWS_ACCESS_KEY_ID": "", "AWS_SECRET_ACCESS_KEY": "", "AWS_ENDPOINT_URL": srv.endpoint()},
			[]string{"AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY must both be set"}},
		{"a prefix with ..", "s3://lake/a/../kart", srv.env(writerKey, writerSecret),
			[]string{`prefix "a/../kart" has a ".." component`}},
	} {
		out, err := runCandec(exe, c.env, "decode", "--dbc", dbc, "--out-dir", c.url, capture)
		t.Logf("%s: %s", c.name, strings.TrimSpace(out))
		for _, w := range c.want {
			if err == nil || !strings.Contains(out, w) {
				t.Errorf("%s: candec decode --out-dir %s: %v\n%s\nwant it to fail with %q", c.name, c.url, err, out, w)
			}
		}
	}
	if got := srv.keys("refused/"); len(got) != 0 {
		t.Errorf("refused decodes left %q", got)
	}
}
