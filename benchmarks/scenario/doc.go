// Package scenario reads the bench's scenarios file and expands a profile
// into the runs it stands for.
//
// # The file
//
// A YAML file declares, by key, the loads (how the capture is replayed),
// the DBC files and the policies, then the scenarios that combine one of
// each, then the profiles that list scenarios:
//
//	defaults: {duration: 20s, warmup: 3s, raw_subscribers: 3, envelope_subscribers: 5}
//	capture: ../testdata/idle.log
//	loads:
//	  car:     {label: car, speed: 1}
//	  fullbus: {label: full bus, speed: 5}
//	  flood:   {label: flood, flood: true}
//	dbcs:
//	  mix8: {file: ../testdata/mix8.dbc, label: "8"}
//	policies:
//	  cap50:   {file: policies/cap-50hz.yaml, label: 50 Hz}
//	  default: {label: default}          # no file: the service's default policy
//	scenarios:
//	  - name: car-8-50hz
//	    load: car
//	    dbc: mix8
//	    policy: cap50
//	    report: {envelopes: 4300, deliveries: 21600, broker_cpu: 47, p50: 16, p99: 32}
//	profiles:
//	  smoke: {duration: 4s, warmup: 1s, scenarios: [car-8-50hz]}
//
// Paths are relative to the file's directory. A scenario may set its own
// duration, warm-up, subscriber counts and stream ("signals", the
// per-signal topics, or "window", the window stream); a profile's
// duration and warm-up override the scenarios'. A scenario's report
// block holds the figures the car team's bus-bench report measured for
// the same row, so a summary can set them side by side.
//
// Unknown keys, references to undeclared loads, DBCs, policies or
// scenarios, and duplicate names are errors that name the file and line.
package scenario
