// Package demo is `candec demo`, the first command a newcomer runs: the
// whole decoder path on one machine, with nothing installed.
//
//	replay (testdata/idle.log, looped) ──raw batches──▶ broker ──▶ service ──envelopes──▶ broker ──▶ board
//
// Without a broker URL it starts the embedded broker (package broker) on
// a free local port. It replays the capture as 10 ms raw batches at its
// own timing (package replay), runs the decoder service on it (package
// service, the same code as `candec run`), subscribes to every signal
// topic and shows the signals updating live: per signal the value with
// its unit or label, the envelopes per second, the last seq and the age
// of the last envelope, and in the header the total envelope count and
// rate. On a terminal the table is redrawn four times a second; on
// anything else a summary line is printed each second.
package demo
