package cli

import (
	"bytes"
	"context"
	"path/filepath"
	"testing"

	"github.com/yukart/candec/internal/testkit/realdata"
)

// TestDecodeRAV4MatchesReference decodes the real RAV4 log with the
// Toyota DBCs, one per interface, and compares every line of the output
// with the reference decodes made by cantools: nothing missing, extra or
// different.
func TestDecodeRAV4MatchesReference(t *testing.T) {
	if testing.Short() {
		t.Skip("decodes a minute of real traffic")
	}
	dir := realdata.Dir(t)
	out := filepath.Join(t.TempDir(), "rav4.jsonl")
	args := []string{"decode",
		"--dbc", "can0=" + filepath.Join(dir, "dbc", "toyota_new_mc_pt_generated.dbc"),
		"--dbc", "can1=" + filepath.Join(dir, "dbc", "toyota_adas.dbc"),
		"-o", out, filepath.Join(dir, "logs", "rav4_2017_highway_1min.log")}
	var stderr bytes.Buffer
	if err := run(context.Background(), Env{nil, &bytes.Buffer{}, &stderr}, args); err != nil {
		t.Fatalf("decode: %v\n%s", err, stderr.String())
	}
	for _, c := range []struct{ bus, ref string }{
		{"can0", "rav4_pt__toyota_new_mc_pt_generated.jsonl.gz"},
		{"can1", "rav4_radar__toyota_adas.jsonl.gz"},
	} {
		t.Run(c.bus, func(t *testing.T) {
			got, err := realdata.ReadDecodes(out, c.bus)
			if err != nil {
				t.Fatal(err)
			}
			want, err := realdata.ReadDecodes(filepath.Join(dir, "expected", c.ref), "")
			if err != nil {
				t.Fatal(err)
			}
			ok, bad, nbad := realdata.Diff(got, want, realdata.SameValue, 10)
			for _, b := range bad {
				t.Error(b)
			}
			if ok == 0 || nbad > 0 {
				t.Fatalf("%d values match the reference, %d do not", ok, nbad)
			}
		})
	}
}
