package service

import (
	"bytes"
	"context"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/yukart/candec/capture"
	"github.com/yukart/candec/dbc"
	"github.com/yukart/candec/envelope"
	"github.com/yukart/candec/frame"
	"github.com/yukart/candec/internal/testkit/brokertest"
	"github.com/yukart/candec/internal/tune"
	"github.com/yukart/candec/pipeline"
)

// TestLiveFidelity: what `candec tune --write-policy` promises, the
// service keeps over mosquitto. The optimizer chooses a policy for the
// first 5 s of testdata/idle.log within 1,500 deliveries/s to 3
// subscribers; the service runs it, fed the same frames as a bridge
// would, and 3 subscribers take every signal. The deliveries they
// receive are within 2 % of tune's prediction for the run (its clock
// ran on after the last frame until the service stopped: the same tail
// offline), and the per-signal error computed from the envelopes a
// subscriber received equals the offline figure.
func TestLiveFidelity(t *testing.T) {
	const subs = 3
	frames := readCapture(t, "../testdata/idle.log", 5*time.Second)
	db, err := dbc.Load("../testdata/yukart.dbc")
	if err != nil {
		t.Fatal(err)
	}
	text := captureText(t, frames)
	polFile, plan := optimizedPolicy(t, db, text, subs, 1500)

	b := brokertest.Start(t)
	var clients []*brokertest.Client
	for range subs {
		c := brokertest.Connect(t, b.URL)
		c.Subscribe("yukart/vehicle/+", DefaultStatusTopic)
		clients = append(clients, c)
	}
	cfg := testConfig(t, b.URL)
	cfg.Policy = polFile
	cfg.ClockLag = time.Second // as TestOfflineLiveEquivalence: batches come back to back
	r := startService(t, cfg, db)
	r.waitConnected(t, clients[0])
	shadow := play(t, r, brokertest.Connect(t, b.URL), db, frames)
	r.stop(t)
	tail := time.Duration(r.engine.Now() - shadow.Now())
	var published float64
	for _, c := range r.m.published {
		published += counter(t, c)
	}
	delivered, received := 0, map[string][]envelope.Envelope{}
	for i, c := range clients {
		envs := receivedEnvelopes(t, c, int(published))
		for topic, es := range envs {
			delivered += len(es)
			if i == 0 {
				received[topic] = es
			}
		}
	}

	pol, err := pipeline.LoadPolicy(polFile)
	if err != nil {
		t.Fatal(err)
	}
	analyze := func(recv map[string][]envelope.Envelope) *tune.Report {
		src, err := capture.NewSource(strings.NewReader(text), capture.Options{})
		if err != nil {
			t.Fatal(err)
		}
		rep, err := tune.Analyze(src, tune.Config{DB: db, Policy: pol, Subscribers: subs, Tail: tail, Received: recv})
		if err != nil {
			t.Fatal(err)
		}
		return rep
	}
	offline := analyze(nil)
	predicted := float64(offline.Envelopes * subs)
	if math.Abs(float64(delivered)-predicted) > 0.02*predicted {
		t.Errorf("delivered %d envelopes to %d subscribers, tune predicted %.0f: more than 2 %% apart", delivered, subs, predicted)
	}
	live := analyze(received)
	for i, s := range offline.Signals {
		if live.Signals[i].Fidelity != s.Fidelity {
			t.Errorf("%s: from the envelopes received %+v, offline %+v", s.Name, live.Signals[i].Fidelity, s.Fidelity)
		}
	}
	if live.TotalError != offline.TotalError || offline.TotalError == 0 {
		t.Errorf("total error received %g, offline %g: want equal, and not 0 (a budget that presses)", live.TotalError, offline.TotalError)
	}
	t.Logf("plan: %.0f deliveries/s (tail-free), error %.4g; live: %d deliveries to %d subscribers (predicted %.0f, tail %s), total error %.6g received = %.6g offline",
		plan.Worst, plan.TotalError, delivered, subs, predicted, tail, live.TotalError, offline.TotalError)
}

// captureText writes frames as a candump log.
func captureText(t *testing.T, frames []frame.Frame) string {
	t.Helper()
	var buf bytes.Buffer
	cw := capture.NewWriter(&buf)
	for i := range frames {
		if err := cw.Write(&frames[i], "can0"); err != nil {
			t.Fatal(err)
		}
	}
	if err := cw.Flush(); err != nil {
		t.Fatal(err)
	}
	return buf.String()
}

// optimizedPolicy runs the optimizer on the capture text and writes its
// policy file.
func optimizedPolicy(t *testing.T, db *dbc.Database, text string, subs int, budget float64) (string, *tune.Plan) {
	t.Helper()
	src, err := capture.NewSource(strings.NewReader(text), capture.Options{})
	if err != nil {
		t.Fatal(err)
	}
	rec, err := tune.Record(context.Background(), "idle-5s", src, db)
	if err != nil {
		t.Fatal(err)
	}
	plan, err := tune.Optimize(context.Background(), []*tune.Recording{rec}, tune.OptimizeConfig{
		Config: tune.Config{DB: db, Subscribers: subs}, Budget: budget,
	})
	if err != nil || !plan.Met {
		t.Fatalf("optimize: %v (met %v)", err, plan != nil && plan.Met)
	}
	name := filepath.Join(t.TempDir(), "optimized.yaml")
	if err := os.WriteFile(name, plan.PolicyYAML(db), 0o600); err != nil {
		t.Fatal(err)
	}
	return name, plan
}

// receivedEnvelopes waits for n signal envelopes and the offline status
// at c and returns the envelopes per topic, in the order received.
func receivedEnvelopes(t *testing.T, c *brokertest.Client, n int) map[string][]envelope.Envelope {
	t.Helper()
	msgs := c.WaitFor("every envelope and offline", func(m []brokertest.Message) bool {
		k := 0
		for _, x := range m {
			if strings.HasPrefix(x.Topic, "yukart/vehicle/") {
				k++
			}
		}
		st := statuses(m)
		return k == n && len(st) > 0 && st[len(st)-1] == StatusOffline
	})
	out := map[string][]envelope.Envelope{}
	for _, m := range msgs {
		if !strings.HasPrefix(m.Topic, "yukart/vehicle/") {
			continue
		}
		var e envelope.Envelope
		if err := envelope.Parse(m.Payload, &e); err != nil {
			t.Fatalf("%s: %v", m.Topic, err)
		}
		out[m.Topic] = append(out[m.Topic], e)
	}
	return out
}
