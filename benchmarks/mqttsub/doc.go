// Package mqttsub is a minimal MQTT 3.1.1 subscriber for measuring: it
// connects, subscribes at QoS 0 and hands each message's topic and
// payload to a callback, from one goroutine that reads the connection,
// without allocating per message.
//
// # Why not paho
//
// candec's own clients use paho (package mqttclient). A bench on a
// two-core machine runs eight subscribers beside the broker it measures,
// and a general client's cost per message (a packet allocated, a
// goroutine hand-off, a callback slice copied) becomes a share of the
// CPU the broker competes for: the observer changes what it observes.
// This client reads each packet into one reusable buffer and calls the
// callback in place.
//
// # What it does not do
//
// QoS 1 and 2, will messages, MQTT v5 properties and reconnection: a
// bench subscriber that loses its connection has failed its run, and
// says so (Client.Err). It reaches a broker as every candec client does
// (mqttclient.Settings: TLS, a user name and password, TCP_NODELAY), so
// a bench against the car's broker measures the same path.
//
// # Packets
//
//	fixed header   byte 0: type << 4 | flags; then the remaining length,
//	               7 bits a byte, low bits first, top bit "more" (≤ 4 bytes)
//	PUBLISH        topic (u16 length + bytes) [packet id if QoS > 0] payload
//	SUBACK         packet id, one return code per filter (0x80: refused)
package mqttsub
