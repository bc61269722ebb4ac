//go:build !car

package main

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/eclipse/paho.golang/paho"

	"github.com/yukart/candec/capture"
	"github.com/yukart/candec/dbc"
	"github.com/yukart/candec/internal/brokertest"
	"github.com/yukart/candec/internal/mosquitto"
	"github.com/yukart/candec/mqttclient"
	"github.com/yukart/candec/pipeline"
)

// TestIngestSIGTERMCommits: candec ingest, a real process, holds the
// windows it took (its roll is an hour away); SIGTERM makes it commit
// them, acknowledge them and exit 0: the lake has them, with their
// manifest, and the broker sends none of them again.
func TestIngestSIGTERMCommits(t *testing.T) {
	if brokertest.FindMosquitto() == "" {
		if os.Getenv(brokertest.RequireEnv) == "1" {
			t.Fatal("mosquitto not found")
		}
		t.Skip("mosquitto not found")
	}
	b, err := mosquitto.Start(context.Background(), mosquitto.Options{Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = b.Stop(5 * time.Second) })
	lake := filepath.Join(t.TempDir(), "lake")
	args := []string{"ingest", "--broker", b.URL, "--dbc", yukartDBC, "--out-dir", lake, "--id", "sigterm", "--roll-age", "1h"}
	p, stderr := startCandec(t, nil, args...)
	waitStderr(t, p, stderr, "subscribed", 1)
	wins := testWindows(t)
	publishQoS1(t, b.URL, "fleet/kart07/yukart/window", wins)
	time.Sleep(500 * time.Millisecond) // delivered to the ingest, held there
	sendSignal(t, p, syscall.SIGTERM)
	if code := exitOf(t, p, promptly, stderr); code != 0 {
		t.Fatalf("exit status %d after SIGTERM, want 0\n%s", code, stderr.String())
	}
	if want := regexp.MustCompile(` (\d+) windows of 1 vehicles, \d+ rows .* 1 commits`); !strings.Contains(stderr.String(), " "+strconv.Itoa(len(wins))+" windows of 1 vehicles") || !want.MatchString(stderr.String()) {
		t.Errorf("summary: %s; want %d windows in 1 commit", stderr.String(), len(wins))
	}
	data, _ := filepath.Glob(filepath.Join(lake, "vehicle=kart07", "message=*", "date=*", "can-sigterm-0000000000.parquet"))
	manifest, err := os.ReadFile(filepath.Join(lake, "_candec_ingest", "sigterm", "0000000000.json"))
	if len(data) == 0 || err != nil || !strings.Contains(string(manifest), `"seqs":[[1,`+strconv.Itoa(len(wins))+`]]`) {
		t.Errorf("lake: %d data files, manifest %s (%v)", len(data), manifest, err)
	}
	p2, stderr2 := startCandec(t, nil, args...)
	waitStderr(t, p2, stderr2, "subscribed", 1)
	time.Sleep(500 * time.Millisecond)
	sendSignal(t, p2, syscall.SIGTERM)
	if code := exitOf(t, p2, promptly, stderr2); code != 0 || !strings.Contains(stderr2.String(), "candec ingest: 0 messages") {
		t.Errorf("second start: exit %d, %s; want 0 messages (every one acknowledged)", code, stderr2.String())
	}
}

// testWindows is the window stream of the test capture, as the car
// publishes it under the default policy.
func testWindows(t *testing.T) [][]byte {
	t.Helper()
	db, err := dbc.Load(yukartDBC)
	if err != nil {
		t.Fatal(err)
	}
	var out [][]byte
	eng, err := pipeline.New(db, pipeline.Config{Window: &pipeline.WindowConfig{}, Epoch: 1}, pipeline.SinkFunc(func(o *pipeline.Out) {
		if o.Kind == pipeline.KindWindow {
			out = append(out, slices.Clone(o.Payload))
		}
	}))
	if err != nil {
		t.Fatal(err)
	}
	src, err := capture.Open(filepath.Join("..", "..", "testdata", "idle.log"), capture.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	if _, err := pipeline.RunOffline(context.Background(), src, eng, pipeline.OfflineOptions{}); err != nil {
		t.Fatal(err)
	}
	return out
}

// publishQoS1 publishes payloads on topic at QoS 1, in order.
func publishQoS1(t *testing.T, url, topic string, payloads [][]byte) {
	t.Helper()
	at := mqttclient.NewAttempts()
	cm, err := mqttclient.Connect(context.Background(), mqttclient.Config{Settings: mqttclient.Settings{Broker: url, ClientID: "car-" + t.Name()}, OnConnectError: at.Record})
	if err != nil {
		t.Fatal(err)
	}
	defer disconnect(cm, time.Second)
	if err := at.Await(context.Background(), cm, url, 10*time.Second); err != nil {
		t.Fatal(err)
	}
	for _, p := range payloads {
		if _, err := cm.Publish(context.Background(), &paho.Publish{Topic: topic, QoS: 1, Payload: p}); err != nil {
			t.Fatal(err)
		}
	}
}
