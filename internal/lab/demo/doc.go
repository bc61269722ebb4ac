// Package demo is `candec demo`, the first command a newcomer runs: the
// whole decoder path on one machine, with nothing installed.
//
//	replay (testdata/idle.log, looped) ──raw batches──▶ broker ──▶ service ──envelopes──▶ broker ──▶ board
//
// Without a broker URL it starts the embedded broker (package broker) on
// a free local port, and uses the production topics (yukart/can/raw,
// yukart/vehicle/<signal>, yukart/decoder/status), since nothing else is
// there.
//
// # On a real broker
//
// With a broker URL the demo may share the broker with the decoder that
// serves the car, so it keeps to its own topics under the prefix
// "candec-demo" (Options.Prefix, --prefix): candec-demo/can/raw,
// candec-demo/vehicle/<signal> and candec-demo/decoder/status, with its
// own client ids. Before it publishes anything it connects (an error
// after Options.ConnectTimeout when the broker does not answer) and reads
// the retained status on its prefix: a decoder that says "online" there
// makes it refuse (ErrDecoderOnline), unless Options.Force (--force), as
// the two would decode each other's frames and overwrite each other's
// signals and status.
//
// # What it shows
//
// It replays the capture as 10 ms raw batches at its own timing (package
// replay), runs the decoder service on it (package service, the same
// code as `candec run`), subscribes to every signal topic and shows the signals updating live: per signal the value with
// its unit or label, the envelopes per second, the last seq and the age
// of the last envelope, and in the header the total envelope count and
// rate. On a terminal the table is redrawn four times a second; on
// anything else a summary line is printed each second.
package demo
