package decoder

import (
	"bufio"
	"compress/gzip"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/yukart/candec/dbc"
	"github.com/yukart/candec/frame"
	"github.com/yukart/candec/internal/realdata"
)

// realKey identifies a decoded value in the reference files: log time in
// µs, CAN ID and "message.signal". Logs repeat (time, ID), so each key
// holds a list of values matched in order.
type realKey struct {
	us     int64
	id     uint32
	signal string
}

// TestRealLogMatchesCantools decodes the real RAV4 log and compares every
// value with cantools' decode of the same frames: values within 1e-9
// relative, exact integers equal, nothing missing or extra.
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
			want := readExpected(t, filepath.Join(dir, "expected", c.expected))
			got := map[realKey][]Value{}
			d := New(db)
			buf := make([]Value, 0, d.MaxSignals())
			eachLogFrame(t, filepath.Join(dir, "logs", "rav4_2017_highway_1min.log"), c.iface, func(us int64, f *frame.Frame) {
				var vals []Value
				_, vals = d.Decode(f, buf)
				for _, v := range vals {
					if v.Flags&Truncated == 0 {
						k := realKey{us, f.ID, v.Signal.FullName()}
						got[k] = append(got[k], v)
					}
				}
			})
			compareReal(t, got, want)
			t.Logf("%s: %+v", c.iface, d.Stats)
		})
	}
}

// compareReal reports missing, extra and different values.
func compareReal(t *testing.T, got map[realKey][]Value, want map[realKey][]string) {
	t.Helper()
	ok, bad := 0, 0
	report := func(format string, args ...any) {
		if bad++; bad <= 10 {
			t.Errorf(format, args...)
		}
	}
	for k, ws := range want {
		gs := got[k]
		for i, w := range ws {
			if i >= len(gs) {
				report("%v: missing, want %s", k, w)
				continue
			}
			if msg := sameAsCantools(&gs[i], w); msg != "" {
				report("%v: %s", k, msg)
				continue
			}
			ok++
		}
		if len(gs) > len(ws) {
			report("%v: %d extra values", k, len(gs)-len(ws))
		}
	}
	for k, gs := range got {
		if _, found := want[k]; !found {
			report("%v: %d values, none expected", k, len(gs))
		}
	}
	if bad > 0 || ok == 0 {
		t.Errorf("%d values match, %d do not", ok, bad)
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

// readExpected reads a reference file into values as written (JSON
// text), per key in order.
func readExpected(t *testing.T, path string) map[realKey][]string {
	t.Helper()
	fh, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer fh.Close()
	zr, err := gzip.NewReader(fh)
	if err != nil {
		t.Fatal(err)
	}
	out := map[realKey][]string{}
	sc := bufio.NewScanner(zr)
	for sc.Scan() {
		var line struct {
			T      json.Number     `json:"t"`
			ID     uint32          `json:"id"`
			Signal string          `json:"signal"`
			Value  json.RawMessage `json:"value"`
		}
		if err := json.Unmarshal(sc.Bytes(), &line); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		k := realKey{micros(t, string(line.T)), line.ID, line.Signal}
		out[k] = append(out[k], string(line.Value))
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// eachLogFrame calls fn for each frame of interface iface in a candump
// -l log: "(seconds.micros) iface ID#HEX".
func eachLogFrame(t *testing.T, path, iface string, fn func(us int64, f *frame.Frame)) {
	t.Helper()
	fh, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer fh.Close()
	sc := bufio.NewScanner(fh)
	for n := 1; sc.Scan(); n++ {
		fields := strings.Fields(sc.Text())
		if len(fields) != 3 || fields[1] != iface {
			continue
		}
		idHex, dataHex, found := strings.Cut(fields[2], "#")
		id, err := strconv.ParseUint(idHex, 16, 32)
		data, err2 := hex.DecodeString(dataHex)
		if !found || err != nil || err2 != nil || len(data) > frame.MaxLen {
			t.Fatalf("%s:%d: cannot read %q", path, n, sc.Text())
		}
		f := &frame.Frame{ID: uint32(id), Len: uint8(len(data))}
		if len(idHex) == 8 {
			f.Flags = frame.Extended
		}
		copy(f.Data[:], data)
		fn(micros(t, strings.Trim(fields[0], "()")), f)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
}

// micros parses "seconds.fraction" into µs exactly.
func micros(t *testing.T, s string) int64 {
	sec, frac, _ := strings.Cut(s, ".")
	frac = (frac + "000000")[:6]
	a, err := strconv.ParseInt(sec, 10, 64)
	b, err2 := strconv.ParseInt(frac, 10, 64)
	if err != nil || err2 != nil {
		t.Fatalf("bad time %q", s)
	}
	return a*1e6 + b
}
