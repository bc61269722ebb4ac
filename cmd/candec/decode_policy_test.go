package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/yukart/candec/capture"
	"github.com/yukart/candec/dbc"
	"github.com/yukart/candec/envelope"
)

func TestDecodeWithPolicy(t *testing.T) {
	db, err := dbc.Load("../../testdata/yukart.dbc")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	policy := filepath.Join(dir, "p.yaml")
	if err := os.WriteFile(policy, []byte("defaults: {max_rate: 10}\nrules:\n  - match: \"*\"\n    publish: false\n  - match: MCU_MotorStatus.MOT_Speed\n    publish: true\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	// 100 Hz frames of MOT_Speed (0x0A0, int16 rpm in bytes 0–1) for
	// 250 ms: a 10 Hz cap publishes the first, then the latest value of
	// each 100 ms window, the last one of the burst included.
	var capt strings.Builder
	for i := range 26 {
		ms := i * 10
		v := uint16(1000 + i)
		fmt.Fprintf(&capt, "(1700000000.%06d) can0 0A0#%02X%02X000000000000\n", ms*1000, byte(v), byte(v>>8))
	}
	var out, errb bytes.Buffer
	err = decodeWithPolicy(context.Background(), env{stdout: &out, stderr: &errb}, db, policy, capture.NewReader(strings.NewReader(capt.String()), capture.Options{}), policyOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	var e envelope.Envelope
	tr := envelope.NewTracker()
	for _, line := range strings.Split(strings.TrimSpace(out.String()), "\n") {
		topic, payload, ok := strings.Cut(line, " ")
		if !ok {
			t.Fatalf("line %q is not \"topic payload\"", line)
		}
		if err := envelope.Parse([]byte(payload), &e); err != nil {
			t.Fatalf("line %q: %v", line, err)
		}
		if o := tr.Observe(topic, &e); o.Lost != 0 || o.Duplicate {
			t.Errorf("line %q: seq not consecutive", line)
		}
		got = append(got, fmt.Sprintf("%s %d @%d", topic, e.Int, (e.TS-1700000000_000000000)/1e6))
	}
	want := []string{
		"yukart/vehicle/MOT_Speed 1000 @0",
		"yukart/vehicle/MOT_Speed 1010 @100",
		"yukart/vehicle/MOT_Speed 1020 @200",
		"yukart/vehicle/MOT_Speed 1025 @250", // the last value, at the end
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if !strings.Contains(errb.String(), "26 frames") || !strings.Contains(errb.String(), "4 envelopes") {
		t.Errorf("summary %q, want frame and envelope counts", errb.String())
	}
}

func TestDecodeWithPolicyBadPolicy(t *testing.T) {
	db, err := dbc.Load("../../testdata/yukart.dbc")
	if err != nil {
		t.Fatal(err)
	}
	policy := filepath.Join(t.TempDir(), "bad.yaml")
	if err := os.WriteFile(policy, []byte("defaults:\n  max_rate: -5\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	err = decodeWithPolicy(context.Background(), env{stdout: &bytes.Buffer{}, stderr: &bytes.Buffer{}}, db, policy, capture.NewReader(strings.NewReader(""), capture.Options{}), policyOptions{})
	if err == nil || !strings.Contains(err.Error(), "bad.yaml:2") || !strings.Contains(err.Error(), "max_rate") {
		t.Errorf("error %v, want one naming the file, line 2 and max_rate", err)
	}
}

// TestDecodePolicyClockJumps reproduces, through the decode command, a
// capture with one frame stamped in the year 2200: the first 2,000
// frames of the idle capture gave 2,473 envelopes, with that frame in
// the middle only 1,705 (149 of them stale marks, the rest held by caps
// behind the poisoned clock) and a span of 1518487h22m. Now that frame
// is dropped and counted, and the output is the same as without it. Two
// captures joined with time going back 3 h are a discontinuity:
// publishing goes on at once, without stale marks.
func TestDecodePolicyClockJumps(t *testing.T) {
	data, err := os.ReadFile("../../testdata/idle.log")
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
			args := []string{"decode", "--dbc", "../../testdata/yukart.dbc", "--policy", "default", name}
			if err := run(context.Background(), env{nil, &out, &errb}, args); err != nil {
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

func TestDecodePolicyBadTail(t *testing.T) {
	db, err := dbc.Load("../../testdata/yukart.dbc")
	if err != nil {
		t.Fatal(err)
	}
	err = decodeWithPolicy(context.Background(), env{stdout: &bytes.Buffer{}, stderr: &bytes.Buffer{}}, db, "", capture.NewReader(strings.NewReader(""), capture.Options{}), policyOptions{Tail: -time.Second})
	if want := "decode: --tail must be 0 or more, got -1s"; err == nil || err.Error() != want || exitCode(err) != 2 {
		t.Errorf("decode --tail -1s: %v (exit %d), want %q, exit 2", err, exitCode(err), want)
	}
}
