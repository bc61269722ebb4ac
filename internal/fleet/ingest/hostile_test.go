package ingest

import (
	"fmt"
	"io/fs"
	"math"
	"path/filepath"
	"strings"
	"testing"

	"github.com/yukart/candec/envelope"
	"github.com/yukart/candec/internal/fleet/lake"
)

// TestHostileValues: a window item whose value its column cannot hold,
// or whose time the lake's time column does not, is counted (reason
// value, time) and skipped, never written as another value or as a
// row of nulls; what the column holds is written exactly, under the
// date of its row's time. MOT_Speed's column is INT64, MOT_Torque's
// DOUBLE.
func TestHostileValues(t *testing.T) {
	const ts = 1791563856001301000 // 2026-10-09
	cases := []struct {
		name, signal, value string
		ts                  int64
		reason              string  // "" when written
		want                float64 // the value read back
		date                string  // its partition
	}{
		{"uint64 max in INT64", "MOT_Speed", "18446744073709551615", ts, ReasonValue, 0, ""},
		{"2^63 in INT64", "MOT_Speed", "9223372036854775808", ts, ReasonValue, 0, ""},
		{"1e308 in INT64", "MOT_Speed", "1e308", ts, ReasonValue, 0, ""},
		{"3.7 in INT64", "MOT_Speed", "3.7", ts, ReasonValue, 0, ""},
		{"-2^63 as a float in INT64", "MOT_Speed", "-9223372036854775808.0", ts, "", math.MinInt64, "2026-10-09"},
		{"NaN in INT64", "MOT_Speed", `null,"nonfinite":"NaN"`, ts, ReasonValue, 0, ""},
		{"+Inf in INT64", "MOT_Speed", `null,"nonfinite":"+Inf"`, ts, ReasonValue, 0, ""},
		{"int64 max in INT64", "MOT_Speed", "9223372036854775807", ts, "", math.MaxInt64, "2026-10-09"},
		{"3.0 in INT64", "MOT_Speed", "3.0", ts, "", 3, "2026-10-09"},
		{"-12 in INT64", "MOT_Speed", "-12", ts, "", -12, "2026-10-09"},
		{"uint64 max in DOUBLE", "MOT_Torque", "18446744073709551615", ts, "", 18446744073709551615, "2026-10-09"},
		{"1e308 in DOUBLE", "MOT_Torque", "1e308", ts, "", 1e308, "2026-10-09"},
		{"the lowest int64 time", "MOT_Speed", "1", math.MinInt64, ReasonTime, 0, ""},
		{"before the first whole day", "MOT_Speed", "1", lake.MinTime - 1, ReasonTime, 0, ""},
		{"the first whole day", "MOT_Speed", "1", lake.MinTime, "", 1, "1677-09-22"},
		{"a time before 1970", "MOT_Speed", "1", -1, "", 1, "1969-12-31"},
		{"the last whole day", "MOT_Speed", "1", lake.MaxTime - 1, "", 1, "2262-04-10"},
		{"after the last whole day", "MOT_Speed", "1", lake.MaxTime, ReasonTime, 0, ""},
		{"the highest int64 time", "MOT_Speed", "1", math.MaxInt64, ReasonTime, 0, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			cfg := testConfig(t, "a")
			cfg.Dir = dir
			in, err := New(cfg)
			if err != nil {
				t.Fatal(err)
			}
			defer in.Close()
			win := fmt.Sprintf(`{"seq":1,"epoch":7,"start":0,"end":1,"items":[["yukart/vehicle/%s",{"value":%s,"ts":%d,"seq":1,"epoch":7}]]}`,
				tc.signal, tc.value, tc.ts)
			in.core.handle(kartTopic, []byte(win), ackRef{gen: 1, id: 1})
			if err := in.core.close(); err != nil {
				t.Fatal(err)
			}
			c := in.Counters()
			var files []string
			_ = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
				if err == nil && strings.HasSuffix(p, ".parquet") {
					rel, _ := filepath.Rel(dir, p)
					files = append(files, filepath.ToSlash(rel))
				}
				return err
			})
			if tc.reason != "" {
				if c.Malformed[tc.reason] != 1 || c.Values != 0 || c.Rows != 0 || len(files) != 0 {
					t.Errorf("malformed %v, %d values, %d rows, files %q; want 1 %s, nothing written", c.Malformed, c.Values, c.Rows, files, tc.reason)
				}
				return
			}
			if len(c.Malformed) != 0 || c.Values != 1 || c.Rows != 1 {
				t.Errorf("malformed %v, %d values, %d rows; want one of each written", c.Malformed, c.Values, c.Rows)
			}
			want := "vehicle=kart01/message=MCU_MotorStatus/date=" + tc.date + "/can-a-0000000000.parquet"
			if len(files) != 1 || files[0] != want {
				t.Fatalf("files %q, want %s", files, want)
			}
			cells := lakeCells(t, dir)
			got := cells[cell{"kart01", "MCU_MotorStatus", tc.signal, tc.ts}]
			if len(got) != 1 || got[0] != tc.want {
				t.Errorf("read back %v, want [%v] (all cells: %v)", got, tc.want, cells)
			}
		})
	}
}

// TestFleetHostileIngest: what a car, or an operator's mistake, can do
// to the ingest through the fleet's broker as shipped (fleet.conf,
// fleet.acl, certificates of a test CA), one row each: a window resent
// long after it was committed, a second instance given the first one's
// id, values and times the lake cannot hold, and a window too large.
// Each row checks the counters and the lake read back against what the
// car published, every window once.
func TestFleetHostileIngest(t *testing.T) {
	for _, row := range []struct {
		name string
		run  func(t *testing.T, f *fleet)
	}{
		{"a window resent 20 commits later, and after a restart", hostileResend},
		{"a second instance with the first one's id, on another lake", hostileTakeover},
		{"values and times the lake cannot hold", hostileValues},
		{"a window over the size bound", hostileOversized},
	} {
		t.Run(row.name, func(t *testing.T) { row.run(t, startFleet(t)) })
	}
}

// hostileResend: the car's bridge resends windows committed 20 commits
// before (a new message to the broker, after an outage), then again
// once the instance has restarted: skipped, counted as duplicates.
func hostileResend(t *testing.T, f *fleet) {
	wins := carWindows(t, envelope.Msgpack)
	dir := t.TempDir()
	cfg := brokerConfig(t, f, "a", dir)
	cfg.MaxUnacked = 40 // a commit every 40 windows
	r := startIngest(t, cfg)
	kart := f.car(t, "kart01")
	kart.publish(t, wins[:1000])
	r.waitFor(t, "25 commits", func(c Counters) bool { return c.Windows == 1000 && c.Commits >= 25 })
	kart.publish(t, wins[:30]) // 25 commits after they were committed
	r.waitFor(t, "the resend", func(c Counters) bool { return c.Duplicates == 30 })
	r.stop()
	if r.err != nil {
		t.Fatal(r.err)
	}
	again := startIngest(t, cfg)
	kart.publish(t, wins[500:]) // 500 to 999 again, then the rest
	again.waitFor(t, "every window", func(c Counters) bool { return c.Windows == uint64(len(wins)-1000) && c.Duplicates == 500 })
	again.stop()
	if again.err != nil {
		t.Fatal(again.err)
	}
	sameCells(t, lakeCells(t, dir), published(t, "kart01", wins))
}

// hostileTakeover: TestTakeoverStops, as a row.
func hostileTakeover(t *testing.T, f *fleet) { takeoverStops(t, f) }

// hostileValues: a car's windows with values its columns cannot hold
// (INT64 given 2^64-1, 3.7, NaN) and times the lake's time column does
// not (the lowest int64): counted by reason, skipped; the window's
// other values written.
func hostileValues(t *testing.T, f *fleet) {
	dir := t.TempDir()
	r := startIngest(t, brokerConfig(t, f, "a", dir))
	const ts = 1791563856001301000
	item := func(sig, value string, ts int64, seq int) string {
		return fmt.Sprintf(`["yukart/vehicle/%s",{"value":%s,"ts":%d,"seq":%d,"epoch":7}]`, sig, value, ts, seq)
	}
	win := `{"seq":1,"epoch":7,"start":0,"end":1,"items":[` + strings.Join([]string{
		item("MOT_Speed", "18446744073709551615", ts, 1),
		item("MOT_Speed", "3.7", ts+1, 2),
		item("MOT_Speed", `null,"nonfinite":"NaN"`, ts+2, 3),
		item("MOT_Speed", "1", math.MinInt64, 4),
		item("MOT_Speed", "-12", ts+3, 5),
	}, ",") + `]}`
	f.car(t, "kart01").publish(t, [][]byte{[]byte(win)})
	r.waitFor(t, "the window", func(c Counters) bool { return c.Windows == 1 })
	r.stop()
	if r.err != nil {
		t.Fatal(r.err)
	}
	c := r.in.Counters()
	if c.Malformed[ReasonValue] != 3 || c.Malformed[ReasonTime] != 1 || c.Values != 1 || c.Rows != 1 {
		t.Errorf("malformed %v, %d values in %d rows; want 3 value, 1 time, one value written", c.Malformed, c.Values, c.Rows)
	}
	want := map[cell][]float64{{"kart01", "MCU_MotorStatus", "MOT_Speed", ts + 3}: {-12}}
	sameCells(t, lakeCells(t, dir), want)
}

// hostileOversized: a car's window over the bound (here 256 KiB, under
// the shipped broker's message_size_limit of 1 MiB, which refuses a
// larger one before the ingest sees it: TestFleetHostileBroker) is
// counted (reason size) and skipped before it is parsed; the car's
// windows before and after it are written.
func hostileOversized(t *testing.T, f *fleet) {
	wins := carWindows(t, envelope.JSON)
	dir := t.TempDir()
	cfg := brokerConfig(t, f, "a", dir)
	cfg.MaxWindowBytes = 256 << 10
	r := startIngest(t, cfg)
	big := largeWindow(t, 512<<10)
	kart := f.car(t, "kart01")
	kart.publish(t, wins[:100])
	kart.publish(t, [][]byte{big})
	kart.publish(t, wins[100:200])
	r.waitFor(t, "every message", func(c Counters) bool { return c.Messages == 201 })
	r.stop()
	if r.err != nil {
		t.Fatal(r.err)
	}
	if c := r.in.Counters(); c.Malformed[ReasonSize] != 1 || c.Windows != 200 || c.Acked != 201 {
		t.Errorf("counters %+v: want 1 malformed (size), 200 windows, 201 acknowledged", c)
	}
	sameCells(t, lakeCells(t, dir), published(t, "kart01", wins[:200]))
}

// largeWindow is a JSON window of more than n bytes, valid (its seq
// after the test capture's).
func largeWindow(t testing.TB, n int) []byte {
	t.Helper()
	var b strings.Builder
	b.WriteString(`{"seq":100000,"epoch":1791563850000000000,"start":0,"end":1,"items":[`)
	for i := 0; b.Len() < n; i++ {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `["yukart/vehicle/MOT_Speed",{"value":%d,"ts":%d,"seq":%d,"epoch":1791563850000000000}]`, i%1000, 1791563856000000000+int64(i)*1000, i+1)
	}
	b.WriteString("]}")
	return []byte(b.String())
}
