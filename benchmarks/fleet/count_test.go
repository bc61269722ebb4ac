package fleet

import (
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"
)

// TestCount reads a lake's commit record as the bench does: windows
// named once are committed, twice a duplicate, never a loss; a window
// no manifest names is lost; a manifest naming a car or a seq the
// fleet never sent is an error, not a figure.
func TestCount(t *testing.T) {
	cars := testCars(t, 2, 2*time.Second)
	a, b := cars[0], cars[1]
	na, nb := len(a.Windows), len(b.Windows)
	write := func(t *testing.T, lake, owner, name, body string) {
		dir := filepath.Join(lake, manifestDir, owner)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	seqs := func(c Car, ranges string) string {
		return `{"vehicle":"` + c.ID + `","epoch":` + itoa(c.Epoch) + `,"seqs":` + ranges + `}`
	}
	tests := []struct {
		name      string
		manifests map[string]string // owner/name → body
		lost, dup int
		err       bool
	}{
		{name: "all once, two owners", manifests: map[string]string{
			"i0/0000000001.json": `{"windows":[` + seqs(a, `[[1,`+itoa(uint64(na))+`]]`) + `]}`,
			"i1/0000000001.json": `{"windows":[` + seqs(b, `[[1,10]]`) + `]}`,
			"i1/0000000002.json": `{"windows":[` + seqs(b, `[[11,`+itoa(uint64(nb))+`]]`) + `]}`,
		}},
		{name: "a gap and a duplicate; a pending is no commit", manifests: map[string]string{
			"i0/0000000001.json":         `{"windows":[` + seqs(a, `[[1,5],[8,`+itoa(uint64(na))+`]]`) + `,` + seqs(b, `[[1,`+itoa(uint64(nb))+`]]`) + `]}`,
			"i1/0000000001.json":         `{"windows":[` + seqs(a, `[[5,5]]`) + `]}`,
			"i1/0000000002.pending.json": `{"windows":[` + seqs(a, `[[6,7]]`) + `]}`,
		}, lost: 2, dup: 1},
		{name: "a car no one drove", manifests: map[string]string{
			"i0/0000000001.json": `{"windows":[{"vehicle":"car99999","epoch":1,"seqs":[[1,1]]}]}`,
		}, err: true},
		{name: "a seq past the drive", manifests: map[string]string{
			"i0/0000000001.json": `{"windows":[` + seqs(a, `[[1,`+itoa(uint64(na+1))+`]]`) + `]}`,
		}, err: true},
		{name: "not JSON", manifests: map[string]string{"i0/0000000001.json": `{"windows":`}, err: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			lake := t.TempDir()
			for p, body := range tt.manifests {
				write(t, lake, filepath.Dir(p), filepath.Base(p), body)
			}
			r := &run{cfg: Config{Cars: cars}, lake: lake}
			res := &Result{PublishedWindows: na + nb}
			err := r.count(res)
			if tt.err {
				if err == nil {
					t.Fatalf("count: nil error, want one")
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if res.Lost != tt.lost || res.Duplicates != tt.dup || res.CommittedWindows != na+nb-tt.lost {
				t.Errorf("lost %d, duplicates %d, committed %d; want %d, %d, %d", res.Lost, res.Duplicates, res.CommittedWindows, tt.lost, tt.dup, na+nb-tt.lost)
			}
			if tt.lost == 0 && res.CommittedValues != a.Values()+b.Values() {
				t.Errorf("committed values %d, want %d", res.CommittedValues, a.Values()+b.Values())
			}
		})
	}
}

func itoa(v uint64) string { return strconv.FormatUint(v, 10) }
