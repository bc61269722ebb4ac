package decodejob

import (
	"bytes"
	"context"
	"errors"
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
	err = RunPolicy(context.Background(), &out, &errb, db, policy, capture.NewReader(strings.NewReader(capt.String()), capture.Options{}), PolicyOptions{})
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
	err = RunPolicy(context.Background(), &bytes.Buffer{}, &bytes.Buffer{}, db, policy, capture.NewReader(strings.NewReader(""), capture.Options{}), PolicyOptions{})
	if err == nil || !strings.Contains(err.Error(), "bad.yaml:2") || !strings.Contains(err.Error(), "max_rate") {
		t.Errorf("error %v, want one naming the file, line 2 and max_rate", err)
	}
}

func TestDecodePolicyBadTail(t *testing.T) {
	db, err := dbc.Load("../../testdata/yukart.dbc")
	if err != nil {
		t.Fatal(err)
	}
	err = RunPolicy(context.Background(), &bytes.Buffer{}, &bytes.Buffer{}, db, "", capture.NewReader(strings.NewReader(""), capture.Options{}), PolicyOptions{Tail: -time.Second})
	var ue *UsageError
	if want := "decode: --tail must be 0 or more, got -1s"; err == nil || err.Error() != want || !errors.As(err, &ue) {
		t.Errorf("decode --tail -1s: %v, want %q as a *UsageError (exit status 2)", err, want)
	}
}
