package main

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/yukart/candec/internal/realdata"
)

// refLine is one line of a reference decode (and of candec's JSON lines).
type refLine struct {
	T      json.Number `json:"t"`
	ID     uint32      `json:"id"`
	Signal string      `json:"signal"`
	Value  any         `json:"value"`
	Bus    string      `json:"bus"`
}

type refKey struct {
	t      string // seconds with six decimals
	id     uint32
	signal string
}

// loadRef reads JSON lines into values per key, in order of appearance.
func loadRef(t *testing.T, r *bufio.Scanner, bus string) map[refKey][]any {
	t.Helper()
	out := map[refKey][]any{}
	for r.Scan() {
		var l refLine
		dec := json.NewDecoder(bytes.NewReader(r.Bytes()))
		dec.UseNumber()
		if err := dec.Decode(&l); err != nil {
			t.Fatalf("bad line %q: %v", r.Text(), err)
		}
		if bus != "" && l.Bus != bus {
			continue
		}
		k := refKey{micros(string(l.T)), l.ID, l.Signal}
		out[k] = append(out[k], l.Value)
	}
	if err := r.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// micros normalises a seconds string to six decimals.
func micros(s string) string {
	i, f, _ := strings.Cut(s, ".")
	f = (f + "000000")[:6]
	return i + "." + f
}

func sameValue(a, b any) bool {
	an, aok := a.(json.Number)
	bn, bok := b.(json.Number)
	if !aok || !bok {
		return fmt.Sprint(a) == fmt.Sprint(b)
	}
	x, err1 := an.Float64()
	y, err2 := bn.Float64()
	if err1 != nil || err2 != nil {
		return false
	}
	return x == y || math.Abs(x-y) <= 1e-9*math.Max(1, math.Max(math.Abs(x), math.Abs(y)))
}

// TestDecodeRAV4MatchesReference decodes the real RAV4 log with the
// Toyota DBCs and compares every value with the reference decodes made
// by cantools: nothing missing, extra or different.
func TestDecodeRAV4MatchesReference(t *testing.T) {
	dir := realdata.Dir(t)
	out := filepath.Join(t.TempDir(), "rav4.jsonl")
	args := []string{"decode",
		"--dbc", "can0=" + filepath.Join(dir, "dbc", "toyota_new_mc_pt_generated.dbc"),
		"--dbc", "can1=" + filepath.Join(dir, "dbc", "toyota_adas.dbc"),
		"-o", out, filepath.Join(dir, "logs", "rav4_2017_highway_1min.log")}
	var stderr bytes.Buffer
	if err := run(context.Background(), env{nil, &bytes.Buffer{}, &stderr}, args); err != nil {
		t.Fatalf("decode: %v\n%s", err, stderr.String())
	}
	for _, c := range []struct{ bus, ref string }{
		{"can0", "rav4_pt__toyota_new_mc_pt_generated.jsonl.gz"},
		{"can1", "rav4_radar__toyota_adas.jsonl.gz"},
	} {
		t.Run(c.bus, func(t *testing.T) {
			f, err := os.Open(out)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			sc := bufio.NewScanner(f)
			sc.Buffer(make([]byte, 1<<20), 1<<20)
			got := loadRef(t, sc, c.bus)

			rf, err := os.Open(filepath.Join(dir, "expected", c.ref))
			if err != nil {
				t.Fatal(err)
			}
			defer rf.Close()
			zr, err := gzip.NewReader(rf)
			if err != nil {
				t.Fatal(err)
			}
			want := loadRef(t, bufio.NewScanner(zr), "")

			var ok, missing, extra, diff int
			report := func(format string, a ...any) {
				if missing+extra+diff <= 10 {
					t.Errorf(format, a...)
				}
			}
			for k, wv := range want {
				gv := got[k]
				for i := range max(len(wv), len(gv)) {
					switch {
					case i >= len(gv):
						missing++
						report("missing %v: want %v", k, wv[i])
					case i >= len(wv):
						extra++
						report("extra %v: got %v", k, gv[i])
					case !sameValue(gv[i], wv[i]):
						diff++
						report("%v: got %v, want %v", k, gv[i], wv[i])
					default:
						ok++
					}
				}
			}
			for k, gv := range got {
				if _, seen := want[k]; !seen {
					extra += len(gv)
					report("extra %v: got %v", k, gv)
				}
			}
			t.Logf("ok=%d missing=%d extra=%d different=%d", ok, missing, extra, diff)
			if ok == 0 || missing+extra+diff > 0 {
				t.Fatalf("decode differs from the reference: ok=%d missing=%d extra=%d different=%d", ok, missing, extra, diff)
			}
		})
	}
}
