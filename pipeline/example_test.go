package pipeline_test

import (
	"fmt"
	"time"

	"github.com/yukart/candec/dbc"
	"github.com/yukart/candec/frame"
	"github.com/yukart/candec/pipeline"
)

// A 100 Hz speed signal under a 20 Hz cap: the first value goes out at
// once, then the first frame after each 50 ms window (fresh, not the
// value held from inside the window), and when the frames stop the last
// one still gets out, with its own timestamp.
func Example() {
	speed := &dbc.Signal{Name: "Speed", Length: 16, Factor: 0.01, Unit: "km/h"}
	db, _ := dbc.NewDatabase([]*dbc.Message{{
		Name: "Wheels", ID: 0x100, Length: 8, CycleTime: 10 * time.Millisecond, Signals: []*dbc.Signal{speed},
	}})
	policy, _ := pipeline.ParsePolicy("example.yaml", []byte("defaults: {max_rate: 20}"))
	eng, _ := pipeline.New(db, pipeline.Config{Policies: policy, Epoch: 1}, pipeline.SinkFunc(func(o *pipeline.Out) {
		fmt.Printf("%-8s %s %s\n", o.Kind, o.Topic, o.Payload)
	}))
	const start = int64(1_760_000_000_000_000_000)
	for i := range 8 {
		f := frame.Frame{Time: start + int64(i)*int64(11*time.Millisecond), ID: 0x100, Len: 8}
		f.Data[0] = byte(100 + i) // 1.00, 1.01, … km/h
		eng.Frame(&f)
	}
	eng.Advance(start + int64(time.Second)) // the frames stopped
	// Output:
	// value    yukart/vehicle/Speed {"value":1.0,"unit":"km/h","ts":1760000000000000000,"seq":1,"epoch":1}
	// value    yukart/vehicle/Speed {"value":1.05,"unit":"km/h","ts":1760000000055000000,"seq":2,"epoch":1}
	// trailing yukart/vehicle/Speed {"value":1.07,"unit":"km/h","ts":1760000000077000000,"seq":3,"epoch":1}
}
