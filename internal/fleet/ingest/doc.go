// Package ingest is the cloud side of a fleet (`candec ingest`): it
// takes the cars' window streams from the fleet's broker, QoS 1 with a
// persistent session, and writes them into one lake (package lake)
// with a vehicle= partition, exactly once per window. docs/ingest.md is
// the reference.
//
// # A window's way
//
// A message on fleet/<vehicle>/yukart/window is parsed
// (envelope.ParseWindow); its envelopes become rows, one per message
// and frame time (the frame they were decoded from), as the values a
// decode of the frame would give (decoder.Value), written through the
// vehicle's lake.Writer: the same code path as decode's lake. Nothing is
// acknowledged yet.
//
// # Commits and acknowledgements
//
// A commit (by size, age, count of messages waiting, or at the end)
// writes a pending record, the data files, then the manifest, which is
// the commit point, and only then acknowledges every message taken
// since the last one. The record lives in the lake
// (_candec_ingest/<id>/): a start resumes from it, removing what an
// unfinished commit made visible, and skips the windows committed,
// which each manifest records whole, per vehicle and epoch, as bounded
// seq ranges (committedSet): the broker sends a window again when its
// acknowledgement was lost, and a car's bridge may send one again long
// after. paho's acknowledgements are held back by a session wrapper
// (ackSession) rather than paho's manual acknowledgement, whose cost
// grows with the square of the messages waiting.
//
// # Memory
//
// A commit comes early once the vehicles' writers hold
// Config.RollMemory of rows, and a vehicle's writer keeps no Parquet
// writer between commits: the memory is bounded whatever the number of
// vehicles, but for each vehicle's own state (its trackers, metrics and
// committed windows, about 32 kB). A window larger than
// Config.MaxWindowBytes is refused before it is parsed.
//
// # Several instances
//
// Instances share the lake, each with its own id (its MQTT client id,
// its file names and record), and split the fleet with a shared
// subscription (Config.Group). A second instance of one id takes the
// session over; the first stops (ErrTakenOver) without committing what
// it holds, told by the broker or by a subscription identifier not its
// own (takeover.go).
//
// # From NATS JetStream
//
// With Config.JetStream the windows come from a stream instead
// (jetstream.go, jsrun.go): a durable pull consumer per partition,
// pinned by the server to one instance at a time; the instances of a
// group announce themselves (presence.go) and each consumes the
// partitions rendezvous hashing gives it. The core is the same (windows
// to commits); a message is acknowledged by its reply subject once
// committed, and what is skipped as taken is decided first by the
// stream sequence: each manifest records, per partition, the sequence
// committed up to and the ranges above it (streamseq.go), which an
// instance reads from every instance's record when a partition comes to
// it (corestream.go).
package ingest
