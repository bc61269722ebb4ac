package benchmarks

import (
	"testing"
	"time"

	"github.com/yukart/candec/benchmarks/scenario"
)

// TestSignalPeriods checks each cyclic topic's period, found by running
// the decoder's engine over the capture at the load's speed, against
// what the car's DBC and the default policy make of the idle capture:
// whole numbers of the message's cycle, at least the cap's interval,
// and a multiplexed signal once per round of its multiplexor; no period
// for on-change signals or a flood.
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
		car, full time.Duration // ±1 %; 0: not cyclic
	}{
		// 100 Hz (500 Hz) under 20 Hz: the first frame at or after the
		// window's end, the 6th (26th) as the capture's frames come a
		// little under 10 ms apart.
		{"yukart/vehicle/MOT_Speed", 60 * ms, 52 * ms},
		{"yukart/vehicle/IMU_YawRate", 60 * ms, 52 * ms},           // 50 Hz: 3 cycles; 250 Hz: 13
		{"yukart/vehicle/BMS_PackVoltage", 60 * ms, 54 * ms},       // 33 Hz: 2 cycles; 6 ms: 9
		{"yukart/vehicle/INV_Derating", 100 * ms, 60 * ms},         // 20 Hz under 20 Hz: every 2nd frame
		{"yukart/vehicle/BMS_Cell01", 400 * ms, 80 * ms},           // multiplexed: one page in 8
		{"yukart/vehicle/MOT_StatusCounter", 1000 * ms, 1000 * ms}, // 1 Hz cap
		{"yukart/vehicle/MOT_TempStator", 0, 0},                    // on change, heartbeat
		{"yukart/vehicle/BMS_State", 0, 0},                         // value table: on change
	} {
		for _, x := range []struct {
			load string
			got  time.Duration
			want time.Duration
		}{{"car", car.period[c.topic], c.car}, {"full bus", full.period[c.topic], c.full}} {
			if d := x.got - x.want; d > x.want/100 || -d > x.want/100 {
				t.Errorf("%s at %s: period %v, want %v", c.topic, x.load, x.got, x.want)
			}
		}
	}
	if len(car.period) != 122 {
		t.Errorf("%d cyclic topics, want the default policy's 122", len(car.period))
	}
	if n := len(run(1, true).period); n != 0 {
		t.Errorf("flood: %d cyclic topics, want none", n)
	}
}
