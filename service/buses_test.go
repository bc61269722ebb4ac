package service

import (
	"bytes"
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/yukart/candec/dbc"
	"github.com/yukart/candec/frame"
)

// radarDBC is a second bus whose ID 256 is not the car's Motor.
const radarDBC = `VERSION ""
BU_: R
BO_ 256 Track: 8 R
 SG_ Dist : 0|16@1+ (0.1,0) [0|250] "m" R
`

// TestNewBuses: with dbc IFACE=FILE the service decodes each bus's
// frames with its own DBC (bus 1's ID 256 is Track, not Motor), counts
// and logs once the frames of a bus without one; one DBC for every bus
// that decodes frames of two is logged once.
func TestNewBuses(t *testing.T) {
	dir := t.TempDir()
	car, radar := filepath.Join(dir, "car.dbc"), filepath.Join(dir, "radar.dbc")
	os.WriteFile(car, []byte(testDBC), 0o644)
	os.WriteFile(radar, []byte(radarDBC), 0o644)
	ts := time.Now().UnixNano()
	on := func(bus uint8, f frame.Frame) frame.Frame { f.Bus = bus; return f }
	frames := []frame.Frame{
		on(0, motorFrame(ts, 1000, 5)), on(1, motorFrame(ts+1, 700, 0)), on(2, motorFrame(ts+2, 9, 9)), on(2, stateFrame(ts+3, 1)),
	}
	for _, tc := range []struct {
		name          string
		dbc           []string
		topics        []string
		noDBC         float64
		logs, notLogs []string
	}{
		{"by interface", []string{"can0=" + car, "can1=" + radar}, []string{"yukart/vehicle/Speed", "yukart/vehicle/Torque", "yukart/vehicle/Dist"}, 2,
			[]string{"interface=can2"}, []string{"one DBC"}},
		{"one for all", []string{car}, []string{"yukart/vehicle/Speed", "yukart/vehicle/Torque", "yukart/vehicle/Gear"}, 0,
			[]string{"one DBC, given for every interface, decodes frames of several", "interfaces=can0,can1,can2"}, []string{"without a DBC"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := testConfig(t, "mqtt://127.0.0.1:1")
			cfg.Policy = ""
			cfg.DBC = tc.dbc
			files, err := cfg.DBCFiles()
			if err != nil {
				t.Fatal(err)
			}
			b, err := dbc.LoadBuses(context.Background(), files)
			if err != nil {
				t.Fatal(err)
			}
			var logs bytes.Buffer
			s, err := NewBuses(cfg, b, slog.New(slog.NewTextHandler(&logs, nil)), prometheus.NewRegistry())
			if err != nil {
				t.Fatal(err)
			}
			s.out.setConnected(true)
			raw, _ := appendBatch(nil, 0, frames)
			for range 2 { // logged once
				s.handleBatch(raw, DefaultRawTopic)
			}
			var topics []string
			for {
				m, ok := s.out.take(nil)
				if !ok {
					break
				}
				if !slices.Contains(topics, m.topic) {
					topics = append(topics, m.topic)
				}
			}
			slices.Sort(topics)
			want := slices.Sorted(slices.Values(tc.topics))
			if !slices.Equal(topics, want) {
				t.Errorf("got topics %q, want %q", topics, want)
			}
			if got := counter(t, s.m.noDBC); got != 2*tc.noDBC {
				t.Errorf("candec_frames_no_dbc_total: got %v, want %v", got, 2*tc.noDBC)
			}
			for _, l := range tc.logs {
				if n := strings.Count(logs.String(), l); n != 1 {
					t.Errorf("log has %q %d times, want once:\n%s", l, n, logs.String())
				}
			}
			for _, l := range tc.notLogs {
				if strings.Contains(logs.String(), l) {
					t.Errorf("log has %q:\n%s", l, logs.String())
				}
			}
		})
	}
}
