package decoder

import (
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	canlog "github.com/yukart/candec/capture"
	"github.com/yukart/candec/dbc"
	"github.com/yukart/candec/frame"
	"github.com/yukart/candec/internal/testkit/realdata"
)

// TestRealLogMatchesCantools decodes the real RAV4 log and compares every
// value with cantools' decode of the same frames: values within 1e-9
// relative, integer values Exact and equal, nothing missing or extra.
func TestRealLogMatchesCantools(t *testing.T) {
	if testing.Short() {
		t.Skip("decodes a minute of real traffic (seconds)")
	}
	dir := realdata.Dir(t)
	for _, c := range []struct{ iface, dbcFile, expected string }{
		{"can0", "toyota_new_mc_pt_generated.dbc", "rav4_pt__toyota_new_mc_pt_generated.jsonl.gz"},
		{"can1", "toyota_adas.dbc", "rav4_radar__toyota_adas.jsonl.gz"},
	} {
		t.Run(c.iface, func(t *testing.T) {
			db, err := dbc.Load(filepath.Join(dir, "dbc", c.dbcFile))
			if err != nil {
				t.Fatal(err)
			}
			want, err := realdata.ReadDecodes(filepath.Join(dir, "expected", c.expected), "")
			if err != nil {
				t.Fatal(err)
			}
			// Values are compared as they come out of Decode; the text
			// key holds an index into vals.
			var vals []Value
			got := map[realdata.Key][]string{}
			d := New(db)
			buf := make([]Value, 0, d.MaxSignals())
			eachLogFrame(t, filepath.Join(dir, "logs", "rav4_2017_highway_1min.log"), c.iface, func(f *frame.Frame) {
				_, vs := d.Decode(f, buf)
				for _, v := range vs {
					if v.Flags&Truncated == 0 {
						k := realdata.Key{Micros: f.Time / 1e3, ID: f.ID, Signal: v.Signal.FullName()}
						got[k] = append(got[k], strconv.Itoa(len(vals)))
						vals = append(vals, v)
					}
				}
			})
			same := func(g, w string) bool {
				i, _ := strconv.Atoi(g)
				return sameAsCantools(&vals[i], w) == ""
			}
			ok, bad, nbad := realdata.Diff(got, want, same, 10)
			for _, b := range bad {
				t.Error(b)
			}
			if ok == 0 || nbad > 0 {
				t.Errorf("%d values match, %d do not", ok, nbad)
			}
			t.Logf("%s: %+v", c.iface, d.Stats)
		})
	}
}

// sameAsCantools compares a value with cantools' JSON: numbers within
// 1e-9 relative; an integer literal must come out Exact and equal.
func sameAsCantools(v *Value, w string) string {
	switch w {
	case `"NaN"`, "null":
		if !math.IsNaN(v.Phys) {
			return fmt.Sprintf("got %v, want NaN", v.Phys)
		}
		return ""
	case `"Infinity"`, `"-Infinity"`:
		if !math.IsInf(v.Phys, map[string]int{`"Infinity"`: 1, `"-Infinity"`: -1}[w]) {
			return fmt.Sprintf("got %v, want %s", v.Phys, w)
		}
		return ""
	}
	if !strings.ContainsAny(w, ".eE") {
		switch {
		case v.Flags&Unsigned != 0:
			if strconv.FormatUint(v.Uint(), 10) != w {
				return fmt.Sprintf("got %d, want %s", v.Uint(), w)
			}
		case v.Flags&Exact != 0:
			if strconv.FormatInt(v.Int, 10) != w {
				return fmt.Sprintf("got %d, want %s", v.Int, w)
			}
		default:
			return fmt.Sprintf("got %v (flags %05b), want exact %s", v.Phys, v.Flags, w)
		}
		return ""
	}
	x, err := strconv.ParseFloat(w, 64)
	if err != nil {
		return err.Error()
	}
	if v.Phys != x && math.Abs(v.Phys-x) > 1e-9*math.Max(1, math.Max(math.Abs(v.Phys), math.Abs(x))) {
		return fmt.Sprintf("got %v, want %s", v.Phys, w)
	}
	return ""
}

// eachLogFrame calls fn for each frame of interface iface in a candump
// log, or of every interface when iface is "".
func eachLogFrame(t *testing.T, path, iface string, fn func(f *frame.Frame)) {
	t.Helper()
	fh, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer fh.Close()
	r := canlog.NewReader(fh, canlog.Options{})
	var f frame.Frame
	for {
		err := r.Next(&f)
		if errors.Is(err, io.EOF) {
			return
		}
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		if iface == "" || r.Interface(f.Bus) == iface {
			fn(&f)
		}
	}
}
