package ingest

import (
	"fmt"
	"io/fs"
	"math"
	"path/filepath"
	"strings"
	"testing"

	"github.com/yukart/candec/internal/lake"
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
