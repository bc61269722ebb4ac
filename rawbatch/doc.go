// Package rawbatch encodes and decodes the raw batch wire format,
// version 1: one MQTT message that carries a batch of classic CAN frames
// as the bridge received them.
//
// # Layout
//
// All integers are little-endian. A batch is a 12-byte header followed by
// count frames of 24 bytes each:
//
//	header                      frame
//	 0  u8   version = 1         0  u64  timestamp, ns since the Unix epoch
//	 1  u8   flags = 0           8  u32  CAN ID, SocketCAN layout
//	 2  u16  count              12  u8   data length, 0–8
//	 4  u64  seq                13  u8   bus index (0 = can0)
//	12  count × 24 bytes        14  u16  reserved = 0
//	                            16  8 B  data
//
// Seq is the bridge's running frame counter of the first frame; frame i
// has seq+i. It restarts at 0 when the bridge restarts, which is how
// SeqTracker tells a restart from lost frames. A per-frame publisher
// sends batches with count = 1; the format is the same.
//
// # Decoding
//
// Parse validates the whole message once and returns a Batch that reads
// frames out of the message bytes on demand, into a caller-owned
// frame.Frame, without allocating. Every violation is a *FormatError that
// names the byte offset and the frame, and wraps one of the Err…
// sentinels.
//
// # Encoding
//
// AppendBatch appends one batch built from a slice of frames; an Encoder
// accumulates frames one at a time (a bridge's batching window) and
// numbers its batches continuously. Both reject frames the format cannot
// carry: CAN FD frames, data longer than 8 bytes, IDs wider than their
// format.
package rawbatch
