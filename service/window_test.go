package service

import (
	"context"
	"log/slog"
	"testing"
	"time"

	"github.com/yukart/candec/capture"
	"github.com/yukart/candec/dbc"
	"github.com/yukart/candec/envelope"
	"github.com/yukart/candec/internal/brokertest"
	"github.com/yukart/candec/mqttclient"
	"github.com/yukart/candec/pipeline"
	"github.com/yukart/candec/replay"
)

// TestWindowStreamQoS1NoLoss replays the car's idle capture (at 4×, a
// busier bus than the car's) to a service publishing the window stream
// at QoS 1. Every window must reach the subscriber: a window holds
// frames no other window has, so the stream is never coalesced (before,
// its queue held 8 windows and a QoS 1 publisher waiting on slow
// acknowledgements lost some, counted as coalesced).
func TestWindowStreamQoS1NoLoss(t *testing.T) {
	b := brokertest.Start(t)
	sub := brokertest.Connect(t, b.URL)
	sub.Subscribe("yukart/window", DefaultStatusTopic)
	db, err := dbc.Load("../testdata/yukart.dbc")
	if err != nil {
		t.Fatal(err)
	}
	cfg := testConfig(t, b.URL)
	cfg.Policy = "" // the built-in default
	cfg.QoS = 1
	cfg.Encoding = "msgpack"
	cfg.WindowTopic = "yukart/window"
	r := startServiceLog(t, cfg, db, testWriter{t}, slog.LevelInfo)
	r.waitConnected(t, sub)

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	cm, err := mqttclient.Connect(ctx, mqttclient.Config{URL: b.URL, ClientID: "bridge-" + t.Name()})
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		dctx, dcancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer dcancel()
		_ = cm.Disconnect(dctx)
	}()
	if err := cm.AwaitConnection(ctx); err != nil {
		t.Fatal(err)
	}
	pub := mqttclient.NewPublisher(cm, DefaultRawTopic, 0, false, "")
	st, err := replay.Run(ctx, replay.OpenFile("../testdata/idle.log", capture.Options{}), pub,
		replay.Options{Speed: 4, FirstSeq: 1})
	if err != nil || st.Failed > 0 {
		t.Fatalf("replay: %+v, %v", st, err)
	}
	waitUntil(t, "every frame decoded", func() bool {
		return counter(t, r.m.rawFrames) >= float64(st.Frames)
	})
	waitUntil(t, "the outbox drained", func() bool { return r.out.len() == 0 })
	published := counter(t, r.m.published[pipeline.KindWindow])
	var w envelope.Window
	var last uint64
	var got int
	sub.WaitFor("every published window", func(m []brokertest.Message) bool {
		got = 0
		for _, x := range m {
			if x.Topic == "yukart/window" {
				got++
			}
		}
		return float64(got) >= published
	})
	for _, x := range sub.Messages() {
		if x.Topic != "yukart/window" {
			continue
		}
		if err := envelope.ParseWindow(x.Payload, &w); err != nil {
			t.Fatal(err)
		}
		if w.Seq != last+1 {
			t.Fatalf("window seq %d after %d: got a gap, want every window", w.Seq, last)
		}
		last = w.Seq
	}
	if lost := counter(t, r.m.windowOverflow); lost != 0 || last < 100 {
		t.Errorf("got %d windows (last seq %d), %v dropped; want every window (more than 100), none dropped", got, last, lost)
	}
}
