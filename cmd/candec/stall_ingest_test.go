package main

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/yukart/candec/internal/fleet/ingest"
	"github.com/yukart/candec/internal/testkit/brokertest"
)

// TestIngestStopsBrokerNotReading: the ingest, whose broker stopped
// reading (the acknowledgements of its final commit go nowhere), ends
// within ingest.WriteTimeout and the DISCONNECT's second of SIGTERM
// (its commit aside) with exit status 0, the windows it took committed
// to the lake; the summary says how many were acknowledged (the broker
// sends the others again, and they are skipped).
func TestIngestStopsBrokerNotReading(t *testing.T) {
	b := brokertest.Start(t)
	proxy := brokertest.StartProxy(t, b.Addr)
	lake := filepath.Join(t.TempDir(), "lake")
	p, stderr := startCandec(t, nil, "ingest", "--broker", proxy.URL, "--dbc", yukartDBC, "--out-dir", lake, "--id", "stall", "--roll-age", "1h")
	waitStderr(t, p, stderr, "subscribed", 1)
	proxy.StopReading()
	before := proxy.ToClients()
	wins := testWindows(t)
	publishQoS1(t, b.URL, "fleet/kart07/yukart/window", wins)
	waitRelayed(t, proxy, before)
	stopWithin(t, p, stderr, ingest.WriteTimeout+time.Second, 0, " windows of 1 vehicles")
}
