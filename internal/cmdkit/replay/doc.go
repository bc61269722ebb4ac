// Package replay plays a CAN capture as raw batches (package rawbatch) to
// a publisher, the way the car's bridge would send the same traffic: at
// the capture's own timing, faster (Speed), or as fast as it can go
// (Flood); batched over a window (10 ms by default) or one frame per
// message (PerFrame); once or in a loop. `candec demo` and `candec
// replay` use it.
//
// # Timestamps
//
// A replayed frame's timestamp is its reception time on the replay's own
// timeline, not the capture's: the wall-clock time at which the frame is
// due (start + capture offset / speed), or the time it was taken in
// flood mode. So a subscriber measures latency from it exactly as on the
// car, where the timestamp is the kernel's reception time: a batched
// frame waits for its window to close, as it does in the bridge.
//
//	capture  ─┬──┬─┬───┬──┬──▶ capture time
//	replay     due = start + (t − t₀)/speed
//	windows  |····10 ms····|····10 ms····|   a batch leaves when its window closes
//
// The batches' seq numbers the frames continuously from Options.FirstSeq,
// across loops, like a bridge that keeps running. A loop starts the
// capture again one mean frame gap after its last frame.
//
// Frames the wire format cannot carry are skipped and counted by reason
// (Stats.SkippedBy): CAN FD frames (SkipFD: wire format v1 carries
// classic CAN only), other frames it cannot encode (SkipUnencodable), and
// the malformed lines a source skipped (SkipMalformed, with
// capture.Options.SkipInvalid). A publish that fails is counted with its
// frames, which are lost, as in a bridge whose broker went away; the seq
// moves on, so subscribers count the loss. `candec replay` exits
// non-zero when any publish failed.
//
// Speed is limited to MinSpeed..MaxSpeed and Window to
// MinWindow..MaxWindow; Run refuses others (ErrOptions) rather than let
// the due-time arithmetic overflow.
package replay
