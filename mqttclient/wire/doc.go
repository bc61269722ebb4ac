// Package wire encodes and decodes the few MQTT packets candec writes or
// reads by hand, beside the clients that speak the rest of the protocol:
// mqttclient's Batcher writes QoS 0 PUBLISH packets (MQTT v5) under
// paho, on paho's own connection, and the bench's subscriber
// (internal/fleet/mqtt311) speaks MQTT 3.1.1 with CONNECT, SUBSCRIBE,
// PUBLISH, PINGREQ and DISCONNECT.
//
// Everything appends to a caller's buffer or reads into one, so that a
// packet written or read on a hot path allocates nothing once the buffer
// has grown. The functions named V5 follow MQTT v5 (a PUBLISH carries
// properties), those named V311 MQTT 3.1.1 (no properties); the fixed
// header and its remaining length are the same in both.
//
// # Packets
//
//	fixed header   byte 0: type << 4 | flags; then the remaining length,
//	               7 bits a byte, low bits first, top bit "more" (≤ 4 bytes)
//	PUBLISH        topic (u16 length + bytes) [packet id if QoS > 0]
//	               [v5: properties (length + properties)] payload
//	SUBACK         packet id, one return code per filter (0x80: refused)
//
// # Why not paho's packets package
//
// paho.golang's packets reads MQTT v5 only and builds each packet anew:
// BenchmarkReadPublish reads a PUBLISH of a 120-byte envelope in 40 ns
// and no allocation with ReadPacket and ParsePublishV311, in 2,841 ns
// and 22 allocations with paho's packets.ReadPacket (medians of one
// run; the benchmark's doc gives the command). mqttclient's Batcher
// writes its PUBLISH packets itself for the same reason: paho's Publish
// builds each in eight allocations.
package wire
