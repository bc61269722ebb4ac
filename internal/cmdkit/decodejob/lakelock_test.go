package decodejob

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/yukart/candec/dbc"
	"github.com/yukart/candec/internal/cmdkit/outformat"
	"github.com/yukart/candec/internal/fleet/lake"
)

// TestLakeUnlockedAfterRun: a decode into a lake holds the lake only
// while it runs: after a run that succeeded, one that stopped on a
// corrupt capture and one whose context ended, the lake can be opened
// again. A lake another run holds is refused at once, naming it.
func TestLakeUnlockedAfterRun(t *testing.T) {
	if _, ok := outformat.LakeFormat(); !ok {
		t.Skip("no format of this build writes a lake")
	}
	dir := t.TempDir()
	good := filepath.Join(dir, "good.log")
	bad := filepath.Join(dir, "bad.log")
	os.WriteFile(good, []byte("(1791563856.000000) can0 0A0#E803070000000000\n"), 0o644)
	os.WriteFile(bad, []byte("(1791563856.000000) can0 0A0#FAZZ\n"), 0o644)
	canceled, cancel := context.WithCancel(context.Background())
	cancel()
	lk := filepath.Join(dir, "lake")
	for _, c := range []struct {
		name    string
		ctx     context.Context
		input   string
		wantErr string
	}{
		{"success", context.Background(), good, ""},
		{"corrupt capture", context.Background(), bad, "bad.log:1:"},
		{"interrupted", canceled, good, "interrupted"},
	} {
		cfg := Config{Inputs: []string{c.input}, OutDir: lk, Jobs: 1, DBCs: dbc.BusFiles{All: []string{yukartDBC}},
			Stdout: &bytes.Buffer{}, Stderr: &bytes.Buffer{}}
		err := Run(c.ctx, cfg)
		if c.wantErr == "" && err != nil || c.wantErr != "" && (err == nil || !strings.Contains(err.Error(), c.wantErr)) {
			t.Errorf("%s: got %v, want %q", c.name, err, c.wantErr)
		}
		h, err := cfg.DBCs.Hash(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		l, err := lake.Open(lake.Config{Dir: lk, DBC: h})
		if err != nil {
			t.Fatalf("%s: the lake after the run: %v", c.name, err)
		}
		if c.name == "success" {
			// Held by another run: refused.
			cfg.Inputs = []string{good}
			err := Run(context.Background(), cfg)
			if !errors.Is(err, lake.ErrBusy) || !strings.Contains(err.Error(), lk) {
				t.Errorf("a run into a held lake: got %v, want lake.ErrBusy naming %s", err, lk)
			}
		}
		l.Close()
	}
}
