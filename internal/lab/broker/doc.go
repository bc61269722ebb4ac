// Package broker runs an embedded MQTT broker inside the process, so that
// candec can be tried on a machine without mosquitto: `candec demo` starts
// one on a free port, and the broker tests fall back to it when
// mosquitto is not installed.
//
// It wraps github.com/mochi-mqtt/server/v2 with the settings candec needs:
// one TCP listener, anonymous access to every topic, MQTT v5 with
// retained messages and message properties (the envelopes' content type)
// passed through. It is not meant for the car: there, candec talks to the
// car's mosquitto.
//
// Go sets TCP_NODELAY on every TCP connection it accepts, so the embedded
// broker never holds small messages back the way a default mosquitto
// does (see the README on set_tcp_nodelay).
package broker
