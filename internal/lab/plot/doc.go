// Package plot draws what signals did during a capture: `candec plot`.
//
// Collect reads a capture through the frame source, decodes the signals
// a glob names and keeps each one's values with their frame times; with
// a policy it also runs the frames through the pipeline engine offline,
// as the service would, and keeps what it would publish. Chart draws
// them: one panel per unit, time on the x axis; a signal with a value
// table gets a panel of its own, drawn as steps with its labels on the
// y axis; the published points over the raw values show what a cap or
// on-change costs in fidelity before the policy goes to the car.
//
// A glob that matches no signal, or signals no frame of the capture
// carries, is an error naming them (ErrNoMatch, ErrNoFrames): never an
// empty picture.
package plot
