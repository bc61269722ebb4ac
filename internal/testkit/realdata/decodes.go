package realdata

import (
	"bufio"
	"compress/gzip"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"strconv"
	"strings"
)

// Key identifies a decoded value in a reference file: the log time in
// µs, the CAN ID and "message.signal". Logs repeat (time, ID) now and
// then, so a key maps to its values in order of appearance.
type Key struct {
	Micros int64
	ID     uint32
	Signal string
}

func (k Key) String() string {
	return fmt.Sprintf("t=%d.%06d id=%d %s", k.Micros/1e6, k.Micros%1e6, k.ID, k.Signal)
}

// ReadDecodes reads JSON lines of {"t", "id", "signal", "value"} (gzip
// when the name ends in .gz) into each key's values as JSON text, in
// order. With bus set, only lines whose "bus" is bus are kept.
func ReadDecodes(path, bus string) (map[Key][]string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var r io.Reader = f
	if strings.HasSuffix(path, ".gz") {
		zr, err := gzip.NewReader(f)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		r = zr
	}
	out := map[Key][]string{}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for n := 1; sc.Scan(); n++ {
		var line struct {
			T      json.Number     `json:"t"`
			ID     uint32          `json:"id"`
			Signal string          `json:"signal"`
			Value  json.RawMessage `json:"value"`
			Bus    string          `json:"bus"`
		}
		if err := json.Unmarshal(sc.Bytes(), &line); err != nil {
			return nil, fmt.Errorf("%s:%d: %w", path, n, err)
		}
		if bus != "" && line.Bus != bus {
			continue
		}
		us, err := Micros(string(line.T))
		if err != nil {
			return nil, fmt.Errorf("%s:%d: %w", path, n, err)
		}
		k := Key{us, line.ID, line.Signal}
		out[k] = append(out[k], string(line.Value))
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return out, nil
}

// Micros parses "seconds.fraction" into µs exactly, truncating digits
// past the sixth.
func Micros(s string) (int64, error) {
	sec, frac, _ := strings.Cut(s, ".")
	frac = (frac + "000000")[:6]
	a, err := strconv.ParseInt(sec, 10, 64)
	b, err2 := strconv.ParseUint(frac, 10, 64)
	if err != nil || err2 != nil {
		return 0, fmt.Errorf("bad time %q", s)
	}
	return a*1e6 + int64(b), nil
}

// SameValue compares two JSON values as the reference comparison does:
// numbers within 1e-9 relative (absolute near zero), anything else as
// text, with null counting as "NaN".
func SameValue(got, want string) bool {
	norm := func(s string) string {
		if s == "null" {
			return `"NaN"`
		}
		return s
	}
	got, want = norm(got), norm(want)
	x, err1 := strconv.ParseFloat(got, 64)
	y, err2 := strconv.ParseFloat(want, 64)
	if err1 != nil || err2 != nil {
		return got == want
	}
	return x == y || math.Abs(x-y) <= 1e-9*math.Max(1, math.Max(math.Abs(x), math.Abs(y)))
}

// Diff compares decodes per key and returns how many values match and
// a description of up to max mismatches, with their total count.
func Diff(got, want map[Key][]string, same func(got, want string) bool, max int) (ok int, bad []string, nbad int) {
	add := func(format string, a ...any) {
		if nbad++; len(bad) < max {
			bad = append(bad, fmt.Sprintf(format, a...))
		}
	}
	for k, ws := range want {
		gs := got[k]
		for i, w := range ws {
			switch {
			case i >= len(gs):
				add("%v: missing, want %s", k, w)
			case !same(gs[i], w):
				add("%v: got %s, want %s", k, gs[i], w)
			default:
				ok++
			}
		}
		if len(gs) > len(ws) {
			add("%v: %d extra values", k, len(gs)-len(ws))
		}
	}
	for k, gs := range got {
		if _, found := want[k]; !found {
			add("%v: %d values, none expected", k, len(gs))
		}
	}
	return ok, bad, nbad
}
