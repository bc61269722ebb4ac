package service

import (
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/yukart/candec/dbc"
	"github.com/yukart/candec/frame"
)

// TestHandleBatchAllocs pins the service's own per-frame cost at zero
// allocations in steady state: parsing a received batch, running its
// frames through the engine, queueing the envelopes and taking them out
// for the MQTT client.
//
// With NewBuses (the DBC chosen by interface, as candec run does) too.
func TestHandleBatchAllocs(t *testing.T) {
	db := loadTestDB(t)
	s, err := New(testConfig(t, "mqtt://127.0.0.1:1"), db, nil, prometheus.NewRegistry())
	if err != nil {
		t.Fatal(err)
	}
	b := &dbc.Buses{Files: dbc.BusFiles{Interfaces: map[string][]string{"can0": {"test.dbc"}}}, Interfaces: map[string]*dbc.Database{"can0": db}}
	sb, err := NewBuses(testConfig(t, "mqtt://127.0.0.1:1"), b, nil, prometheus.NewRegistry())
	if err != nil {
		t.Fatal(err)
	}
	for name, s := range map[string]*Service{"New": s, "NewBuses": sb} {
		t.Run(name, func(t *testing.T) { handleBatchAllocs(t, s) })
	}
}

func handleBatchAllocs(t *testing.T, s *Service) {
	s.out.setConnected(true)
	ts := time.Now().UnixNano()
	var seq uint64
	frames := make([]frame.Frame, 0, 20)
	raw := make([]byte, 0, 1024)
	var spare []byte
	taken := 0
	step := func() {
		frames = frames[:0]
		for i := range 10 {
			ts += int64(time.Millisecond)
			frames = append(frames, motorFrame(ts, uint16(seq)+uint16(i), int16(i)), stateFrame(ts, byte(seq/100%4)))
		}
		raw, _ = appendBatch(raw[:0], seq, frames)
		seq += uint64(len(frames))
		s.handleBatch(raw, DefaultRawTopic)
		for {
			m, ok := s.out.take(spare)
			if !ok {
				break
			}
			spare = m.payload
			taken++
		}
	}
	for range 200 { // warm up: buffers grow to their size
		step()
	}
	taken = 0
	if a := testing.AllocsPerRun(200, step); a != 0 {
		t.Fatalf("got %v allocations per 20-frame batch, want 0", a)
	}
	if taken == 0 {
		t.Fatal("no envelope came out: the test measured nothing")
	}
}
