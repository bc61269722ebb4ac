// Package pipeline moves decoded signal values to per-signal topics
// under a policy: rate caps that publish the first fresh frame after
// each window and never lose a burst's final value (a trailing edge),
// on-change with deadbands and heartbeats, staleness marks, and
// an optional window stream. It turns frames into envelope bytes and
// hands them to a Sink; it knows nothing about MQTT.
//
// # Time is the frames' time
//
// Every decision uses frame timestamps. The Engine's "now" is the
// latest frame time it has seen; Advance moves it on when frames stop
// (for trailing values, heartbeats and stale marks). A deadline fires
// before the first frame whose timestamp is past it, or on Advance past
// it, and the envelope it publishes carries the value's own frame
// timestamp. So the envelopes of a topic (value, ts, seq) depend only on
// the frames, not on when Advance is called, provided that Advance(w) is
// only called once no frame older than w can arrive: the offline
// decoder and the live service publish the same envelopes.
//
// # Policies
//
// Policies come from a YAML file (see LoadPolicy and docs/policy.md) or
// the built-in DefaultPolicy, resolved once per signal at New.
//
// # Cost
//
// Per-signal state lives in flat slices indexed by dbc.Signal.Index and
// deadlines in an indexed min-heap, so Frame and Advance do not allocate
// in steady state and Advance is cheap when nothing is due.
package pipeline
