package cli

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestCarDecodeFormats: the car's binary, which links no Parquet row
// (internal/cmdkit/outformat/parquetrow), writes JSON and CSV, and refuses
// --format parquet and --out-dir with exit status 2, naming the
// developer's build, before it writes anything.
func TestCarDecodeFormats(t *testing.T) {
	dir := t.TempDir()
	idle, err := os.ReadFile(filepath.Join(filepath.Dir(yukartDBC), "idle.log"))
	if err != nil {
		t.Fatal(err)
	}
	capture := writeFile(t, dir, "idle.log", strings.Join(strings.SplitAfterN(string(idle), "\n", 201)[:200], ""))
	tests := []struct {
		name    string
		args    []string
		out     string
		carWant string // the error; "" for a format the car has
	}{
		{"json", []string{"--format", "json", "-o", filepath.Join(dir, "o.jsonl")}, "o.jsonl", ""},
		{"csv", []string{"--format", "csv", "-o", filepath.Join(dir, "o.csv")}, "o.csv", ""},
		{"parquet", []string{"--format", "parquet", "-o", filepath.Join(dir, "o.parquet")}, "o.parquet", "decode: --format parquet is not in this build (the car's); use the developer's build"},
		{"lake", []string{"--out-dir", filepath.Join(dir, "lake")}, "lake", "decode: --out-dir: no format of this build writes a lake"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			args := append(append([]string{"decode", "--dbc", yukartDBC}, tt.args...), capture)
			err := run(context.Background(), Env{strings.NewReader(""), &strings.Builder{}, &strings.Builder{}}, args)
			_, statErr := os.Stat(filepath.Join(dir, tt.out))
			if tt.carWant == "" {
				if err != nil || statErr != nil {
					t.Errorf("candec %s: got %v (%v), want %s written", strings.Join(args, " "), err, statErr, tt.out)
				}
				return
			}
			if ExitCode(err) != exitUsage || !strings.Contains(err.Error(), tt.carWant) {
				t.Errorf("candec %s: got %v (status %d), want status 2 with %q", strings.Join(args, " "), err, ExitCode(err), tt.carWant)
			}
			if statErr == nil {
				t.Errorf("candec %s: %s written, want nothing", strings.Join(args, " "), tt.out)
			}
		})
	}
}
