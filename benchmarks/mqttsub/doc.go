// Package mqttsub is the bench's minimal MQTT 3.1.1 client: it
// connects, subscribes at QoS 0 and hands each message's topic and
// payload to a callback, from one goroutine that reads the connection,
// without allocating per message.
//
// It is the bench's name for package internal/fleet/mqtt311, where the
// client lives so that `candec campaign push --mqtt 3.1.1` (package
// rollout, which may not import the bench) speaks through the same one;
// that package's doc says why the bench does not use paho, and what the
// client does not do.
package mqttsub
