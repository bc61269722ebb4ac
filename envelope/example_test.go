package envelope_test

import (
	"fmt"
	"math"

	"github.com/yukart/candec/envelope"
)

// The envelopes of docs/envelope.md, as candec writes them.
func ExampleAppendJSON() {
	speed := envelope.Envelope{Unit: []byte("km/h"), TS: 1760000000123456789, Seq: 42, Epoch: 1760000000000000000}
	speed.SetFloat(48.37)
	fmt.Printf("%s\n", envelope.AppendJSON(nil, &speed))

	gear := envelope.Envelope{Label: []byte("D"), TS: 1760000000150000000, Seq: 7, Epoch: 1760000000000000000}
	gear.SetInt(3)
	fmt.Printf("%s\n", envelope.AppendJSON(nil, &gear))

	stale := envelope.Envelope{Unit: []byte("degC"), TS: 1760000001000000000, Seq: 8, Epoch: 1760000000000000000, Flags: envelope.Stale | envelope.OutOfRange}
	stale.SetInt(181)
	fmt.Printf("%s\n", envelope.AppendJSON(nil, &stale))

	nan := envelope.Envelope{Unit: []byte("m/s^2"), TS: 1760000000200000000, Seq: 9, Epoch: 1760000000000000000}
	nan.SetFloat(math.NaN())
	fmt.Printf("%s\n", envelope.AppendJSON(nil, &nan))
	// Output:
	// {"value":48.37,"unit":"km/h","ts":1760000000123456789,"seq":42,"epoch":1760000000000000000}
	// {"value":3,"label":"D","ts":1760000000150000000,"seq":7,"epoch":1760000000000000000}
	// {"value":181,"unit":"degC","ts":1760000001000000000,"seq":8,"epoch":1760000000000000000,"oor":true,"stale":true}
	// {"value":null,"nonfinite":"NaN","unit":"m/s^2","ts":1760000000200000000,"seq":9,"epoch":1760000000000000000}
}

func ExampleAppendMsgpack() {
	speed := envelope.Envelope{Unit: []byte("km/h"), TS: 1760000000123456789, Seq: 42, Epoch: 1760000000000000000}
	speed.SetFloat(48.37)
	fmt.Printf("% x\n", envelope.AppendMsgpack(nil, &speed))
	// Output:
	// 85 a5 76 61 6c 75 65 cb 40 48 2f 5c 28 f5 c2 8f a4 75 6e 69 74 a4 6b 6d 2f 68 a2 74 73 cf 18 6c c6 ac dc 0b cd 15 a3 73 65 71 2a a5 65 70 6f 63 68 cf 18 6c c6 ac d4 b0 00 00
}

// A subscriber parses each envelope into one reused Envelope and tracks
// loss per topic.
func ExampleParse() {
	var (
		env     envelope.Envelope
		tracker = envelope.NewTracker()
	)
	messages := []struct{ topic, payload string }{
		{"yukart/vehicle/VCU_Gear", `{"value":3,"label":"D","ts":1760000000150000000,"seq":7,"epoch":1760000000000000000}`},
		{"yukart/vehicle/VCU_Gear", `{"value":2,"label":"N","ts":1760000003150000000,"seq":10,"epoch":1760000000000000000}`},
		{"yukart/vehicle/VCU_Gear", `{"value":2,"label":"N","ts":1760000009000000000,"seq":1,"epoch":1760000008000000000}`},
	}
	for _, m := range messages {
		if err := envelope.Parse([]byte(m.payload), &env); err != nil {
			fmt.Println(err)
			continue
		}
		o := tracker.Observe(m.topic, &env)
		fmt.Printf("%s = %d (%s) seq %d: lost %d, restart %v\n", m.topic, env.Int, env.Label, env.Seq, o.Lost, o.Restart)
	}
	// Output:
	// yukart/vehicle/VCU_Gear = 3 (D) seq 7: lost 0, restart false
	// yukart/vehicle/VCU_Gear = 2 (N) seq 10: lost 2, restart false
	// yukart/vehicle/VCU_Gear = 2 (N) seq 1: lost 0, restart true
}
