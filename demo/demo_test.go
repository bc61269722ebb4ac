package demo

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/yukart/candec/internal/brokertest"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// TestDemo runs the demo as a newcomer would on a machine without
// mosquitto (the embedded broker), with its output going to a file: a
// summary line each second, envelopes flowing, none lost, the decoder
// online, and at the end the decoder offline.
func TestDemo(t *testing.T) {
	var out bytes.Buffer
	err := Run(context.Background(), Options{Out: &out, Duration: 3 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	text := out.String()
	lines := regexp.MustCompile(`envelopes ([\d,]+) \(([\d,]+)/s\)   signals (\d+)   lost (\d+)   stale \d+   decoder (\w+)`).FindAllStringSubmatch(text, -1)
	if len(lines) < 3 {
		t.Fatalf("got %d summary lines, want one a second and a final one:\n%s", len(lines), text)
	}
	num := func(s string) int { n, _ := strconv.Atoi(strings.ReplaceAll(s, ",", "")); return n }
	last := lines[len(lines)-1]
	if num(last[1]) < 500 || num(last[3]) < 100 || last[4] != "0" || last[5] != "offline" {
		t.Errorf("final line %q: want hundreds of envelopes on about 149 signals, none lost, the decoder offline", last[0])
	}
	if mid := lines[len(lines)-2]; mid[5] != "online" || num(mid[2]) < 300 {
		t.Errorf("line %q: want the decoder online and hundreds of envelopes a second", mid[0])
	}
	if !strings.Contains(text, "(the embedded broker)") {
		t.Errorf("the header does not say the embedded broker is used:\n%s", text)
	}
}

func TestLocate(t *testing.T) {
	// The tests run in demo/; testdata is at the repository root.
	p, err := Locate(DefaultCapture)
	if err != nil {
		t.Fatal(err)
	}
	if !filepath.IsAbs(p) || !strings.HasSuffix(p, filepath.Join("testdata", "idle.log")) {
		t.Errorf("Locate(%s) = %s; want the repository root's file", DefaultCapture, p)
	}
	if _, err := Locate("testdata/nothing.log"); !errors.Is(err, ErrNotFound) || !strings.Contains(err.Error(), "testdata/nothing.log") {
		t.Errorf("missing file: got %v; want ErrNotFound naming the file", err)
	}
	dir := t.TempDir()
	here := filepath.Join(dir, "x.log")
	if err := os.WriteFile(here, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if p, err := Locate(here); err != nil || p != here {
		t.Errorf("Locate(%s) = %s, %v; want it as given", here, p, err)
	}
}

func TestBoard(t *testing.T) {
	t0 := time.Unix(1_800_000_000, 0)
	b := NewBoard("yukart/vehicle/", "yukart/decoder/status", t0)
	b.Observe("yukart/decoder/status", []byte("online"), t0)
	select {
	case <-b.Online():
	default:
		t.Fatal("Online not closed after the decoder said online")
	}
	for i := 1; i <= 20; i++ {
		at := t0.Add(time.Duration(i) * 50 * time.Millisecond)
		b.Observe("yukart/vehicle/Speed", []byte(`{"value":`+strconv.Itoa(1500+i)+`,"unit":"rpm","ts":1,"seq":`+strconv.Itoa(i)+`,"epoch":7}`), at)
	}
	b.Observe("yukart/vehicle/Gear", []byte(`{"value":3,"label":"D","ts":1,"seq":9,"epoch":7,"stale":true}`), t0.Add(time.Second))
	var out bytes.Buffer
	tot := b.Render(&out, t0.Add(time.Second), -1)
	if tot.Envelopes != 21 || tot.Signals != 2 || tot.Lost != 0 || tot.Stale != 1 || tot.Status != "online" {
		t.Errorf("totals %+v; want 21 envelopes, 2 signals, none lost, 1 stale, online", tot)
	}
	for _, want := range []*regexp.Regexp{
		regexp.MustCompile(`(?m)^Gear +3 \(D\) +1\.0 +9 +0s +STALE$`),
		regexp.MustCompile(`(?m)^Speed +1520 rpm +20\.0 +20 +0s +$`),
	} {
		if !want.MatchString(out.String()) {
			t.Errorf("board lacks a row matching %s:\n%s", want, out.String())
		}
	}
}

// TestDemoRealBroker: --broker runs the demo on a real broker.
func TestDemoRealBroker(t *testing.T) {
	b := brokertest.Start(t)
	var out bytes.Buffer
	if err := Run(context.Background(), Options{Out: &out, Duration: 2 * time.Second, Broker: b.URL}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "to "+b.URL+" (a real broker)") || !strings.Contains(out.String(), "decoder offline") {
		t.Fatalf("output:\n%s\nwant the header naming %s and the decoder offline at the end", out.String(), b.URL)
	}
}
