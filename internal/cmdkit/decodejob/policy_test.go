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
	db, err := dbc.Load("../../../testdata/yukart.dbc")
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
	db, err := dbc.Load("../../../testdata/yukart.dbc")
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
	db, err := dbc.Load("../../../testdata/yukart.dbc")
	if err != nil {
		t.Fatal(err)
	}
	err = RunPolicy(context.Background(), &bytes.Buffer{}, &bytes.Buffer{}, db, "", capture.NewReader(strings.NewReader(""), capture.Options{}), PolicyOptions{Tail: -time.Second})
	var ue *UsageError
	if want := "decode: --tail must be 0 or more, got -1s"; err == nil || err.Error() != want || !errors.As(err, &ue) {
		t.Errorf("decode --tail -1s: %v, want %q as a *UsageError (exit status 2)", err, want)
	}
}

// TestDecodeWithPolicyJ1939Sources: with {sa} in the template, the
// frames of two sources of one PGN are two streams, each with its own
// seq from 1, and the summary counts the sources.
func TestDecodeWithPolicyJ1939Sources(t *testing.T) {
	f, err := dbc.Parse("j1939.dbc", []byte("VERSION \"\"\nBU_: T\nBO_ 2364540158 EEC1: 8 T\n SG_ EngineSpeed : 24|16@1+ (0.125,0) [0|8031.875] \"rpm\" T\nBA_DEF_ \"ProtocolType\" STRING ;\nBA_ \"ProtocolType\" \"J1939\";\n"))
	if err != nil {
		t.Fatal(err)
	}
	db, err := dbc.Compile(f)
	if err != nil {
		t.Fatal(err)
	}
	capt := "(1700000000.000000) can0 0CF00400#0000000010000000\n" +
		"(1700000000.001000) can0 18F00417#0000000020000000\n" +
		"(1700000000.010000) can0 0CF00400#0000000011000000\n" +
		"(1700000000.011000) can0 18F00417#0000000021000000\n"
	var out, errb bytes.Buffer
	err = RunPolicy(context.Background(), &out, &errb, db, "", capture.NewReader(strings.NewReader(capt), capture.Options{}), PolicyOptions{Template: "truck/{sa}/{signal}"})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	var e envelope.Envelope
	for _, line := range strings.Split(strings.TrimSpace(out.String()), "\n") {
		topic, payload, _ := strings.Cut(line, " ")
		if err := envelope.Parse([]byte(payload), &e); err != nil {
			t.Fatalf("line %q: %v", line, err)
		}
		got = append(got, fmt.Sprintf("%s %g #%d", topic, e.Float, e.Seq))
	}
	want := []string{
		"truck/00/EngineSpeed 512 #1",
		"truck/17/EngineSpeed 1024 #1",
		"truck/00/EngineSpeed 544 #2",
		"truck/17/EngineSpeed 1056 #2",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if !strings.Contains(errb.String(), "; J1939 sources 2") {
		t.Errorf("summary %q does not count 2 J1939 sources", errb.String())
	}
}
