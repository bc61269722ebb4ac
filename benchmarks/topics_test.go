package benchmarks

import (
	"testing"
	"time"

	"github.com/yukart/candec/benchmarks/scenario"
	"github.com/yukart/candec/dbc"
)

// TestSignalPeriods checks each cyclic topic's period against the
// car's DBC and the default policy: ⌈cap / cycle⌉ cycles, the cycle at
// the load's speed, and no period for on-change signals or a flood.
func TestSignalPeriods(t *testing.T) {
	run := func(speed float64, flood bool) signalSet {
		t.Helper()
		set, err := signalTopics(scenario.Run{
			DBC: scenario.DBC{File: "../testdata/yukart.dbc"}, Capture: "../testdata/idle.log",
			Load: scenario.Load{Speed: speed, Flood: flood},
		})
		if err != nil {
			t.Fatal(err)
		}
		return set
	}
	const ms = time.Millisecond
	car, full := run(1, false), run(5, false)
	for _, c := range []struct {
		topic     string
		car, full time.Duration // 0: not cyclic
	}{
		{"yukart/vehicle/MOT_Speed", 50 * ms, 50 * ms},                 // 100 Hz (500 Hz) under 20 Hz
		{"yukart/vehicle/IMU_YawRate", 60 * ms, 52 * ms},               // 50 Hz: 3 cycles; 250 Hz: 13 cycles of 4 ms
		{"yukart/vehicle/BMS_PackVoltage", 60 * ms, 54 * ms},           // 33 Hz: 2 cycles; 6 ms: 9 cycles
		{"yukart/vehicle/MOT_StatusCounter", time.Second, time.Second}, // 1 Hz cap
		{"yukart/vehicle/MOT_TempStator", 0, 0},                        // on change, heartbeat
		{"yukart/vehicle/BMS_State", 0, 0},                             // value table: on change
	} {
		if got := car.period[c.topic]; got != c.car {
			t.Errorf("%s at the car's rate: period %v, want %v", c.topic, got, c.car)
		}
		if got := full.period[c.topic]; got != c.full {
			t.Errorf("%s on a full bus: period %v, want %v", c.topic, got, c.full)
		}
	}
	if n := len(run(1, true).period); n != 0 {
		t.Errorf("flood: %d cyclic topics, want none", n)
	}
}

// TestCaptureCycles checks the fallback cycle, the median interval of a
// message's frames in the capture, against the DBC's GenMsgCycleTime for
// every message of the idle capture.
func TestCaptureCycles(t *testing.T) {
	db, err := dbc.Load("../testdata/yukart.dbc")
	if err != nil {
		t.Fatal(err)
	}
	cycles, err := captureCycles("../testdata/idle.log")
	if err != nil {
		t.Fatal(err)
	}
	if len(cycles) < 20 {
		t.Fatalf("got cycles of %d messages, want the capture's 27", len(cycles))
	}
	for k, got := range cycles {
		m := db.Message(k.ID, k.Extended)
		if m == nil || m.CycleTime <= 0 {
			continue
		}
		if d := got - m.CycleTime; d > m.CycleTime/10 || -d > m.CycleTime/10 {
			t.Errorf("%s: median interval %v, want its GenMsgCycleTime %v within 10 %%", m.Name, got, m.CycleTime)
		}
	}
	if _, err := captureCycles("no-such.log"); err == nil {
		t.Error("a missing capture: got no error")
	}
}
