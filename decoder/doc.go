// Package decoder turns CAN frames into signal values using a compiled
// plan per message, writing into a caller-owned buffer without
// allocating.
//
// New compiles every message of a dbc.Database once: for each signal the
// byte offset and shifts that cut its bits out of one 8-byte load (Intel
// and Motorola, with DBC's sawtooth numbering for Motorola, anywhere in
// up to 64 bytes of CAN FD), its sign extension, its IEEE type and how
// its physical value is computed. Decode then looks the frame up by ID
// and format in O(1) and writes one Value per signal into the caller's
// buffer:
//
//	d := decoder.New(db)
//	buf := make([]decoder.Value, 0, d.MaxSignals())
//	for each frame f {
//		msg, vals := d.Decode(&f, buf)
//		...
//	}
//
// A Decoder belongs to one goroutine. Its Stats count frames, decoded
// frames, unknown IDs, short frames and skipped remote and error frames.
//
// # Values
//
// Raw is the signal's bits (sign-extended for signed integers, the IEEE
// bits for floats). Phys is raw × Factor + Offset in float64, with the
// product rounded before the offset is added, as cantools and most tools
// compute it; Factor and Offset apply to every signal, 1-bit flags too.
// The flags say more:
//
//   - Exact: an integer signal with integral Factor and Offset; Int holds
//     the physical value exactly (checked for int64 overflow, so huge
//     signals with huge factors fall back to Phys alone).
//   - Unsigned (with Exact): an unsigned 64-bit raw value with Factor 1
//     and Offset 0 beyond int64; read it with Value.Uint.
//   - Float: the signal is an IEEE float32 or float64.
//   - OutOfRange: the value lies outside the DBC's Min..Max: an integer
//     signal's value as Tidy writes it (raw 7 × factor 0.1 is within a
//     range that ends at 0.7), a float's Phys. Only where
//     Min < Max (DBCs write 0..0 for "no range"). A NaN is never out of
//     range, as it is no point on the scale; ±Inf beyond Min..Max is.
//     The value is never clamped or dropped: DBC ranges are often wrong,
//     and the consumer decides.
//   - Truncated: see below.
//
// Phys carries the binary noise of the arithmetic (raw 7 × 0.1 is
// 0.7000000000000001). Tidy returns the value as candec writes and
// publishes it, rounded to the decimals of the signal's scaling.
//
// # Multiplexing
//
// A multiplexed signal (dbc.Signal.Mux) is decoded only when its switch
// was decoded in the same frame and the switch's raw value lies in one of
// the signal's ranges. Switches come before the signals they select in
// dbc.Message.Signals, so cascaded multiplexers (a multiplexed switch,
// "m1M", and SG_MUL_VAL_ ranges) work in one pass: a signal whose switch
// was itself not selected is not decoded either. A switch value that no
// signal expects loses only the signals it would select; the switch and
// the plain signals are still returned. Values that are not selected are
// left out of the result, so the result can be shorter than the
// message's signal list. A multiplexed signal whose switch is not an
// earlier signal of the same message is never decoded.
//
// # Short and long frames
//
// A frame shorter than the message's DBC length is counted in
// Stats.Short and decoded as far as it goes: every signal whose bits fit
// in the frame's bytes is decoded, and every other (selected) signal is
// returned with the Truncated flag, Raw 0 and Phys NaN, so that a
// consumer sees the signal was due but missing. Consumers that mirror
// tools which refuse short frames skip Truncated values. A truncated
// switch selects nothing. A frame longer than the DBC length is decoded
// from its first bytes.
//
// Remote and error frames carry no signals: Decode skips and counts
// them. A frame whose ID and format (11 or 29 bit) are not in the
// database is counted in Stats.Unknown and returns a nil message: never
// an error.
//
// # Routing
//
// A capture of several buses needs a database per interface: a radar on
// can1 has its own IDs, which may be another message's on can0. A Router
// picks the Decoder by the frame's interface name (RouterConfig: one
// database for every interface, others for named interfaces; the caller
// loads them), keeps only the signals some globs select, and counts per
// bus what a summary reports (BusStats: frames, unknown IDs, remote and
// error frames, short frames, whether the interface had a database;
// Unseen: named interfaces without a frame). The interface names come
// from a Namer, such as the capture.Source the frames are read from:
//
//	r, err := decoder.NewRouter(decoder.RouterConfig{All: car, Interfaces: map[string]*dbc.Database{"can1": radar}})
//	...
//	for each frame f of src {
//		vals, ok := r.Decode(&f, src)
//		...
//	}
//
// Like Decode, Router.Decode allocates nothing.
//
// A consumer that decodes with one database (the pipeline) gets the same
// choice from a Selector: the database is dbc.Buses.Merged's, and
// Selector.Select passes on only the frames their own interface's
// database decodes, rekeyed to their message's ID there.
//
// # Encoding
//
// EncodeRaw and EncodePhys write a signal into a payload, the inverse of
// Decode, for tests and capture generators. EncodePhys rounds to the
// nearest raw value and saturates at the ends of the raw range,
// reporting ErrRawRange.
package decoder
