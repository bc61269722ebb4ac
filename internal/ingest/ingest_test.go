package ingest

import (
	"testing"
	"time"

	"github.com/yukart/candec/envelope"
)

// brokerConfig is an instance of the test DBC on the fleet broker,
// with the certificate "ingest", writing the lake dir.
func brokerConfig(t *testing.T, f *fleet, id, dir string) Config {
	cfg := Config{ID: id, Conn: f.settings(t, "ingest"), Buses: []Bus{{DB: loadDB(t)}}, Dir: dir, DBCHash: "sha256:test",
		ConnectTimeout: 10 * time.Second}
	return cfg
}

// TestIngestThroughBroker: a car's window stream, published on
// fleet/kart01/yukart/window to the fleet's broker as shipped (TLS,
// client certificates, fleet.acl), lands in the lake under
// vehicle=kart01, every value once at its frame's time; the messages
// are acknowledged (a second start of the instance gets none again).
func TestIngestThroughBroker(t *testing.T) {
	f := startFleet(t)
	wins := carWindows(t, envelope.Msgpack)
	dir := t.TempDir()
	cfg := brokerConfig(t, f, "a", dir)
	cfg.MaxUnacked = 500 // several commits
	r := startIngest(t, cfg)
	f.car(t, "kart01").publish(t, wins)
	r.waitFor(t, "every window", func(c Counters) bool { return c.Windows == uint64(len(wins)) })
	r.stop()
	if r.err != nil {
		t.Fatal(r.err)
	}
	c := r.in.Counters()
	if c.Commits < 3 || c.Acked != uint64(len(wins)) || c.Duplicates != 0 || len(c.Malformed) != 0 {
		t.Errorf("counters %+v: want several commits, every message acknowledged once", c)
	}
	sameCells(t, lakeCells(t, dir), published(t, "kart01", wins))

	again := startIngest(t, brokerConfig(t, f, "a", dir))
	time.Sleep(time.Second)
	again.stop()
	if c := again.in.Counters(); c.Messages != 0 {
		t.Errorf("the broker sent %d messages again: they were not acknowledged", c.Messages)
	}
}
