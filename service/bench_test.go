package service

import (
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/yukart/candec/dbc"
	"github.com/yukart/candec/rawbatch"
)

// BenchmarkHandleBatch measures the service's in-process path for the car
// capture as 10 ms raw batches: parse, seq tracking, decode, default
// policy, envelope bytes into the outbox, and taking them out for the
// MQTT client (whose write is not included). One op is one pass over the
// 20 s capture (17,827 frames); ns/frame is the figure to read.
func BenchmarkHandleBatch(b *testing.B) {
	benchHandleBatch(b, func(cfg Config, db *dbc.Database) (*Service, error) {
		return New(cfg, db, nil, prometheus.NewRegistry())
	})
}

// BenchmarkHandleBatchBuses is BenchmarkHandleBatch through NewBuses,
// as candec run builds the service: one DBC for every interface, each
// frame's interface checked (decoder.Selector) before the engine.
func BenchmarkHandleBatchBuses(b *testing.B) {
	benchHandleBatch(b, func(cfg Config, db *dbc.Database) (*Service, error) {
		return NewBuses(cfg, &dbc.Buses{Files: dbc.BusFiles{All: cfg.DBC}, All: db}, nil, prometheus.NewRegistry())
	})
}

func benchHandleBatch(b *testing.B, newService func(Config, *dbc.Database) (*Service, error)) {
	db, err := dbc.Load("../testdata/yukart.dbc")
	if err != nil {
		b.Fatal(err)
	}
	frames := readCapture(b, "../testdata/idle.log", 20*time.Second)
	cfg := testConfig(b, "mqtt://127.0.0.1:1")
	cfg.Policy = ""
	s, err := newService(cfg, db)
	if err != nil {
		b.Fatal(err)
	}
	s.out.setConnected(true)
	// The capture as batches, with timestamps moved on by the capture's
	// length at each pass so that time keeps rising.
	var batches [][]byte
	var seq uint64
	for start := 0; start < len(frames); {
		end := start
		for end < len(frames) && frames[end].Time < frames[start].Time+int64(10*time.Millisecond) {
			end++
		}
		raw, _ := rawbatch.AppendBatch(nil, seq, frames[start:end])
		batches = append(batches, raw)
		seq += uint64(end - start)
		start = end
	}
	span := frames[len(frames)-1].Time - frames[0].Time + int64(time.Millisecond)
	var spare []byte
	b.ReportAllocs()
	b.ResetTimer()
	for pass := range b.N {
		for _, raw := range batches {
			if pass > 0 {
				shift(raw, span)
			}
			s.handleBatch(raw, DefaultRawTopic)
			for {
				m, ok := s.out.take(spare)
				if !ok {
					break
				}
				spare = m.payload
			}
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(frames)), "ns/frame")
}

// shift moves every frame of a raw batch d later, and its seq on by the
// batch's frames' worth of a pass (seq order does not matter here).
func shift(raw []byte, d int64) {
	for off := rawbatch.HeaderSize; off < len(raw); off += rawbatch.FrameSize {
		ts := int64(uint64(raw[off]) | uint64(raw[off+1])<<8 | uint64(raw[off+2])<<16 | uint64(raw[off+3])<<24 |
			uint64(raw[off+4])<<32 | uint64(raw[off+5])<<40 | uint64(raw[off+6])<<48 | uint64(raw[off+7])<<56)
		ts += d
		for i := range 8 {
			raw[off+i] = byte(ts >> (8 * i))
		}
	}
}
