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

	"github.com/yukart/candec/capture"
	"github.com/yukart/candec/internal/lab/mosquitto"
	"github.com/yukart/candec/internal/testkit/brokertest"
	"github.com/yukart/candec/mqttclient"
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
	// About 1,000 envelopes a second on an idle machine; 265 were seen
	// on 2 cores starved by other test runs: the check is that they flow.
	if mid := lines[len(lines)-2]; mid[5] != "online" || num(mid[2]) < 100 {
		t.Errorf("line %q: want the decoder online and envelopes flowing (over 100 a second)", mid[0])
	}
	if !strings.Contains(text, "(the embedded broker)") {
		t.Errorf("the header does not say the embedded broker is used:\n%s", text)
	}
}

func TestLocate(t *testing.T) {
	// The tests run in internal/lab/demo/; testdata is at the repository root.
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
	if err := Run(context.Background(), Options{Out: &out, Duration: 2 * time.Second, Broker: mqttclient.Settings{Broker: b.URL}}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "to "+b.URL+" (a real broker)") || !strings.Contains(out.String(), "decoder offline") {
		t.Fatalf("output:\n%s\nwant the header naming %s and the decoder offline at the end", out.String(), b.URL)
	}
}

// TestDemoOwnPrefix: on a broker where a decoder serves the car, the demo
// keeps to its own topics: the production status stays "online" and
// nothing else appears under yukart/, while the demo's signals and status
// appear under candec-demo/.
func TestDemoOwnPrefix(t *testing.T) {
	b := brokertest.Start(t)
	real := brokertest.Connect(t, b.URL)
	real.PublishQoS1("yukart/decoder/status", []byte("online"), true)
	prod := brokertest.Connect(t, b.URL)
	prod.Subscribe("yukart/#")
	prod.WaitFor("the real decoder's retained status", func(m []brokertest.Message) bool { return len(m) == 1 })

	var out bytes.Buffer
	if err := Run(context.Background(), Options{Out: &out, Duration: 2 * time.Second, Broker: mqttclient.Settings{Broker: b.URL}}); err != nil {
		t.Fatalf("demo: %v\n%s", err, out.String())
	}
	if !strings.Contains(out.String(), "on candec-demo/can/raw") || !strings.Contains(out.String(), "decoder offline") {
		t.Errorf("output:\n%s\nwant the header naming candec-demo/can/raw, and the demo's decoder offline at the end", out.String())
	}
	// What the demo published under candec-demo/ reached the broker
	// before Run returned; a fresh subscriber sees it retained.
	check := brokertest.Connect(t, b.URL)
	check.Subscribe("candec-demo/#", "yukart/#")
	msgs := check.WaitFor("the demo's retained status and signals", func(m []brokertest.Message) bool {
		l := brokertest.Latest(m)
		_, prodStatus := l["yukart/decoder/status"]
		return string(l["candec-demo/decoder/status"].Payload) == "offline" && len(l) > 100 && prodStatus
	})
	if got := string(brokertest.Latest(msgs)["yukart/decoder/status"].Payload); got != "online" {
		t.Errorf("yukart/decoder/status: got %q, want the real decoder's \"online\" untouched", got)
	}
	if got := prod.Messages(); len(got) != 1 {
		t.Errorf("got %d messages under yukart/ during the demo, want only the real decoder's status; the second: %s %q", len(got), got[min(1, len(got)-1)].Topic, got[min(1, len(got)-1)].Payload)
	}
}

// TestDemoRefusesOnlineDecoder: a decoder online on the demo's prefix
// makes the demo refuse at once, before it publishes anything, unless
// forced.
func TestDemoRefusesOnlineDecoder(t *testing.T) {
	b := brokertest.Start(t)
	other := brokertest.Connect(t, b.URL)
	other.PublishQoS1("candec-demo/decoder/status", []byte("online"), true)
	other.PublishQoS1("mine/decoder/status", []byte("online"), true)
	watch := brokertest.Connect(t, b.URL)
	watch.Subscribe("candec-demo/can/raw", "yukart/#", "mine/can/raw")

	tests := []struct {
		name string
		o    Options
	}{
		{"default prefix", Options{}},
		{"production prefix", Options{Prefix: "mine"}},
	}
	for _, tt := range tests {
		var out bytes.Buffer
		tt.o.Broker, tt.o.Out, tt.o.Duration = mqttclient.Settings{Broker: b.URL}, &out, 2*time.Second
		start := time.Now()
		err := Run(context.Background(), tt.o)
		if !errors.Is(err, ErrDecoderOnline) || !strings.Contains(err.Error(), "--force") {
			t.Errorf("%s: got %v, want ErrDecoderOnline suggesting --force", tt.name, err)
		}
		if d := time.Since(start); d > time.Second {
			t.Errorf("%s: refused after %v, want at once", tt.name, d)
		}
	}
	if n := watch.Len(); n != 0 {
		t.Errorf("got %d messages on the raw and production topics, want none", n)
	}

	var out bytes.Buffer
	if err := Run(context.Background(), Options{Broker: mqttclient.Settings{Broker: b.URL}, Out: &out, Duration: time.Second, Force: true}); err != nil {
		t.Fatalf("forced: %v", err)
	}
	if watch.Len() == 0 {
		t.Error("forced: no raw batches on candec-demo/can/raw, want the demo to run")
	}
}

// TestDemoUnreachable: no broker listening is an error naming the URL,
// within the connect timeout, not a demo of "decoder not yet online".
func TestDemoUnreachable(t *testing.T) {
	port, err := mosquitto.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	url := "mqtt://127.0.0.1:" + strconv.Itoa(port)
	var out bytes.Buffer
	start := time.Now()
	err = Run(context.Background(), Options{Broker: mqttclient.Settings{Broker: url}, Out: &out, Duration: 5 * time.Second, ConnectTimeout: 500 * time.Millisecond})
	if err == nil || !strings.Contains(err.Error(), url) || !strings.Contains(err.Error(), "connection refused") {
		t.Fatalf("got %v, want an error naming %s and the refused connection", err, url)
	}
	if d := time.Since(start); d > 3*time.Second {
		t.Errorf("took %v, want about the 500ms connect timeout", d)
	}
	if out.Len() != 0 {
		t.Errorf("printed %q, want nothing", out.String())
	}
}

func TestOptionsRange(t *testing.T) {
	for _, o := range []Options{
		{Speed: -1}, {Speed: 1e-300}, {Speed: 5000}, {Duration: -time.Second},
		{Prefix: "a/+"}, {Prefix: "a/"}, {Prefix: "/a"}, {Prefix: "#"},
	} {
		o.Out = new(bytes.Buffer)
		if err := Run(context.Background(), o); !errors.Is(err, ErrOptions) {
			t.Errorf("%+v: got %v, want ErrOptions", o, err)
		}
	}
}

// TestDemoBadCapture: a capture of no known format is refused before
// anything starts.
func TestDemoBadCapture(t *testing.T) {
	path := filepath.Join(t.TempDir(), "notes.txt")
	if err := os.WriteFile(path, []byte("hello\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	err := Run(context.Background(), Options{Capture: path, Out: &out, Duration: 5 * time.Second})
	if !errors.Is(err, capture.ErrFormat) || !strings.Contains(err.Error(), path) {
		t.Fatalf("got %v, want capture.ErrFormat naming %s", err, path)
	}
	if out.Len() != 0 {
		t.Errorf("printed %q, want nothing", out.String())
	}
}

// TestBoardTerminal: a status, a topic, a unit or a label from the broker
// reach the board with their control characters escaped.
func TestBoardTerminal(t *testing.T) {
	t0 := time.Unix(1_800_000_000, 0)
	b := NewBoard("yukart/vehicle/", "yukart/decoder/status", t0)
	b.Observe("yukart/decoder/status", []byte("\x1b]0;pwned\x07online"), t0)
	b.Observe("yukart/vehicle/\x1b[2JSpeed", []byte(`{"value":3,"unit":"\u001b[31m","label":"\u009b2J","ts":1800000000000000000,"seq":1,"epoch":7}`), t0)
	var out bytes.Buffer
	b.Render(&out, t0.Add(time.Second), -1)
	if strings.ContainsAny(out.String(), "\x1b\x07\u009b") {
		t.Errorf("a control character reaches the terminal:\n%q", out.String())
	}
	for _, want := range []string{`\x1b]0;pwned\aonline`, `\x1b[2JSpeed`, `3 \x1b[31m (\u009b2J)`} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("board lacks %s:\n%s", want, out.String())
		}
	}
}
