package cli

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestDecodePolicyClockJumps reproduces, through the decode command, a
// capture with one frame stamped in the year 2200: the first 2,000
// frames of the idle capture gave 2,473 envelopes, with that frame in
// the middle only 1,705 (149 of them stale marks, the rest held by caps
// behind the poisoned clock) and a span of 1518487h22m. Now that frame
// is dropped and counted, and the output is the same as without it. Two
// captures joined with time going back 3 h are a discontinuity:
// publishing goes on at once, without stale marks.
func TestDecodePolicyClockJumps(t *testing.T) {
	data, err := os.ReadFile("../../../testdata/idle.log")
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.SplitAfter(string(data), "\n")[:2000]
	first := strings.Join(lines, "")
	var back strings.Builder // the same frames 3 h earlier
	for _, l := range lines {
		var sec, usec int64
		var rest string
		if _, err := fmt.Sscanf(l, "(%d.%d) %s", &sec, &usec, &rest); err != nil {
			t.Fatalf("%q: %v", l, err)
		}
		_, tail, _ := strings.Cut(l, ")")
		fmt.Fprintf(&back, "(%d.%06d)%s", sec-3*3600, usec, tail)
	}
	mid := strings.Join(lines[:1000], "")
	midEnd := strings.Join(lines[1000:], "")
	tests := []struct {
		name, capture string
		same          bool   // output identical to the first 2,000 frames'
		summary       string // the summary line's end, after "→ "
		envelopes     int
	}{
		{"first 2000 frames", first, true,
			"2473 envelopes (1103/s over 2.242s): value 2408 heartbeat 51 flush 14; suppressed: cap 5320, unchanged 1275", 2473},
		{"one frame in 2200 in the middle", mid + "(7258118400.000000) can0 0A0#FA0007002C00F198\n" + midEnd, true,
			"2473 envelopes (1103/s over 2.242s): value 2408 heartbeat 51 flush 14; suppressed: cap 5320, unchanged 1275; clock: 1 future dropped", 2473},
		{"one frame in 1970 in the middle", mid + "(0.000100) can0 0A0#FA0007002C00F198\n" + midEnd, true,
			"2473 envelopes (1103/s over 2.242s): value 2408 heartbeat 51 flush 14; suppressed: cap 5320, unchanged 1275; clock: 1 past dropped", 2473},
		{"joined with itself 3 h earlier", first + back.String(), false,
			"4907 envelopes (1094/s over 4.485s): value 4790 heartbeat 103 flush 14; suppressed: cap 10654, unchanged 2576; clock: 1 discontinuity", 4907},
	}
	dir := t.TempDir()
	var plain string
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			name := filepath.Join(dir, fmt.Sprintf("c%d.log", i))
			if err := os.WriteFile(name, []byte(tt.capture), 0o644); err != nil {
				t.Fatal(err)
			}
			var out, errb bytes.Buffer
			args := []string{"decode", "--dbc", "../../../testdata/yukart.dbc", "--policy", "default", name}
			if err := run(context.Background(), Env{nil, &out, &errb}, args); err != nil {
				t.Fatalf("decode: %v\n%s", err, errb.String())
			}
			if i == 0 {
				plain = out.String()
			}
			if tt.same && out.String() != plain {
				t.Errorf("output differs from the first 2,000 frames' alone")
			}
			if n := strings.Count(out.String(), "\n"); n != tt.envelopes {
				t.Errorf("%d envelopes, want %d", n, tt.envelopes)
			}
			if n := strings.Count(out.String(), `"stale":true`); n != 0 {
				t.Errorf("%d stale marks, want 0", n)
			}
			_, got, _ := strings.Cut(strings.TrimSpace(errb.String()), "→ ")
			if got != tt.summary {
				t.Errorf("summary\n got %s\nwant %s", got, tt.summary)
			}
		})
	}
}
