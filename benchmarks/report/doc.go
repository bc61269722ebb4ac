// Package report holds the bench's results: one JSON line per run,
// appended to <dir>/<host>-<date>.jsonl, and the summary that turns the
// last three runs of each scenario into a Markdown baseline.
//
// The results file is a log: each run appends its line as soon as it is
// measured, so a bench stopped half-way keeps the runs it finished. A line
// is written whole or not at all (see AppendFile); the baseline, written
// from these files, is a separate file replaced in one piece.
//
// # The result line
//
// A Result is one run: what ran (scenario, load, DBC, policy, stream),
// what went through (frames offered and delivered, envelopes published
// and delivered, loss from seq gaps), how fast (latency p50/p99/max from
// the frame timestamp to the subscriber, for raw frames and envelopes),
// what it cost (CPU of each process as a percentage of one core, broker
// µs per delivery, bytes per second), how long the topics took to go
// quiet after the load stopped (drain_s), the tool and broker versions,
// and the warnings the run raised. Field names are snake_case; rates are
// per second; latencies in milliseconds.
//
// # The summary
//
// The caller picks the runs: results files hold every profile that ran
// (smoke checks, stress runs), and OfProfile keeps one, so that a short
// smoke run does not move a median of the mix profile. Summarize groups
// results by scenario, keeps the last three by time and
// takes the median of each figure independently, so one disturbed run
// does not move the baseline. It warns when those runs differ in host or
// versions: figures are only comparable on one host with one set of
// versions.
//
// # The charts
//
// Charts draws a summary as pictures: broker CPU against deliveries on
// the report's scale (see Scale), envelope latency per scenario, and
// deliveries per scenario on the signal and window streams. The baseline
// embeds them by file name (Meta.Charts).
package report
