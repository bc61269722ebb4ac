package service

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/yukart/candec/dbc"
	"github.com/yukart/candec/frame"
	"github.com/yukart/candec/internal/testkit/brokertest"
)

// j1939DBC is one J1939 parameter group, EEC1, sent by any source.
const j1939DBC = `VERSION ""
BU_: T
BO_ 2364540158 EEC1: 8 T
 SG_ EngineSpeed : 24|16@1+ (1,0) [0|65535] "rpm" T
BA_DEF_ "ProtocolType" STRING ;
BA_ "ProtocolType" "J1939";
`

// TestJ1939SourcesOverBroker: with {sa} in the topic template, two
// engines sending EEC1 get a topic each, and each topic its own queue:
// a subscriber sees every envelope of both, seq rising by one on each,
// nothing coalesced, and the latest of each retained.
func TestJ1939SourcesOverBroker(t *testing.T) {
	f, err := dbc.Parse("j1939.dbc", []byte(j1939DBC))
	if err != nil {
		t.Fatal(err)
	}
	db, err := dbc.Compile(f)
	if err != nil {
		t.Fatal(err)
	}
	b := brokertest.Start(t)
	sub := brokertest.Connect(t, b.URL)
	sub.Subscribe("truck/#", DefaultStatusTopic)
	cfg := testConfig(t, b.URL)
	cfg.TopicTemplate = "truck/{sa}/{signal}"
	cfg.Policy = filepath.Join(t.TempDir(), "none.yaml")
	if err := os.WriteFile(cfg.Policy, []byte("defaults: {max_rate: 0}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	r := startService(t, cfg, db)
	r.waitConnected(t, sub)

	pub := brokertest.Connect(t, b.URL)
	const batches, perSource = 5, 6 // more of one topic per batch than a topic's queue holds with two sources sharing it
	base := int64(1_760_000_000_000_000_000)
	seq := uint64(0)
	for k := range batches {
		var fs []frame.Frame
		for i := range perSource {
			for _, sa := range []uint32{0x00, 0x17} {
				n := k*perSource + i
				fr := frame.Frame{Time: base + int64(n)*1e6, ID: 0x0CF00400 | sa, Len: 8, Flags: frame.Extended}
				fr.Data[3], fr.Data[4] = byte(n), byte(sa)
				fs = append(fs, fr)
			}
		}
		r.sendPaced(t, pub, seq, fs)
		seq += uint64(len(fs))
	}
	want := batches * perSource
	topics := byTopic(parse(t, sub.WaitFor("every envelope of both sources", func(m []brokertest.Message) bool {
		return len(m) >= 1+2*want
	}), "truck/"))
	for _, sa := range []int{0x00, 0x17} {
		tp := fmt.Sprintf("truck/%02X/EngineSpeed", sa)
		es := topics[tp]
		if len(es) != want {
			t.Fatalf("%s: %d envelopes, want %d (topics %v)", tp, len(es), want, len(topics))
		}
		for i, e := range es {
			if e.Seq != uint64(i+1) || e.Int != int64(sa<<8|i) {
				t.Fatalf("%s: envelope %d is seq %d value %d; want seq %d value %d", tp, i, e.Seq, e.Int, i+1, sa<<8|i)
			}
		}
	}
	if got := len(topics); got != 2 {
		t.Errorf("%d topics, want 2", got)
	}
	if n := counter(t, r.m.sources); n != 2 {
		t.Errorf("candec_j1939_sources %v, want 2", n)
	}
	if n := counter(t, r.m.coalesced); n != 0 {
		t.Errorf("%v envelopes coalesced, want 0", n)
	}
	late := brokertest.Connect(t, b.URL)
	late.Subscribe("truck/#")
	for _, e := range parse(t, late.WaitFor("retained state", func(m []brokertest.Message) bool { return len(m) == 2 }), "truck/") {
		if !e.retain || e.Seq != uint64(want) {
			t.Errorf("%s retained: retain=%v seq %d; want retained seq %d", e.topic, e.retain, e.Seq, want)
		}
	}
}
