// Package mqttclient is candec's one seam to MQTT: it turns a broker URL,
// credentials and TLS files into an auto-reconnecting MQTT v5 connection
// (github.com/eclipse/paho.golang/autopaho), and gives the small
// publisher that replay needs. Any Go program on the car that talks to
// the broker gets the same connection from it: TCP_NODELAY, TCP_QUICKACK,
// backoff.
//
// # Settings
//
// Settings are what a person gives to reach a broker: URL, client id,
// user name and password, CA, certificate and key files, keep-alive.
// They are plain data, as autopaho's ClientConfig is: DefaultSettings
// fills the defaults, Validate says what is wrong, naming the setting
// (a *SettingError). Config embeds them and adds what the program
// decides (timeouts, the will, the callbacks).
//
// Keys describes each setting as text (its key, its help, its default,
// how to read and write it, and whether it is secret or each program's
// own), for a program that takes them from a config file, flags or
// variables: one row per setting, from which candec's config keys, flags
// and variables are all made. This package reads none of these itself:
// candec's flags and CANDEC_ variables are the binary's
// (internal/cmdkit/brokerflags, and service for `candec run`'s config),
// so that another Go program that imports mqttclient inherits neither. Settings.Dial and
// Settings.TLSConfig serve a client that speaks MQTT itself (the bench's
// subscribers).
//
// Attempts.Await waits for a first connection. An attempt that would
// fail the same way again (Final) ends the wait at once: a broker that
// refuses the client (a wrong password: CONNACK 0x86, or 0x87 from
// mosquitto; Refusal), a broker certificate the CA file does not vouch
// for, a broker that refuses the client's certificate or asked for one
// the client has not got (ErrNoClientCert: with TLS 1.3 that shows only
// as an alert or a reset after the handshake, so Dial notes the
// broker's request to name the cause).
//
// A connection Dial makes writes each packet paho writes in one system
// call (paho writes a packet's header and body apart) and reads through
// a buffer. A Batcher (Config.Batcher) lets a publisher gather many
// packets into one write: between Hold and Flush they wait in the
// connection's buffer (at most FlushSize bytes), and Batcher.Publish
// encodes a QoS 0 PUBLISH straight into it, without paho's per-message
// allocations. candec's service sends each batch's envelopes so.
//
// Publisher.Confirm publishes once at QoS 1: a broker drops a QoS 0
// message the user may not publish without a word, and the PUBACK of a
// QoS 1 one says so (ErrPublishRefused, 0x87 not authorized).
//
// Overlap tells whether two topic filters match a common topic (MQTT v5,
// 4.7, $ topics included): `candec run` refuses a raw topic filter that
// would bring it its own messages.
//
// # URLs
//
//	mqtt://host:1883     plain TCP (also tcp://)
//	mqtts://host:8883    TLS (also ssl://, tls://); CAFile, CertFile and
//	                     KeyFile configure the server check and a client
//	                     certificate
//
// A missing port means 1883, or 8883 for TLS. Username and password may
// also come from the URL's user information.
//
// # TCP_NODELAY
//
// Small MQTT messages must not wait for Nagle's algorithm: the bus-bench
// report traced a 40 ms latency tail to it. Go's net package already sets
// TCP_NODELAY on every TCP connection it makes; Dial sets it again
// explicitly, so the guarantee does not rest on a default, and a test
// reads the socket option back. It is not a setting: turning it off
// buys nothing for small messages that are each wanted at once, and
// brings the 40 ms tail back. The broker must do the same
// (mosquitto's set_tcp_nodelay true). Where it does not, it holds each
// small packet (a PUBACK) until the client has acknowledged the data it
// sent before, and Linux delays that ACK by up to 40 ms when it expects
// to send data soon: a QoS 1 publisher, waiting for each PUBACK, then
// waited up to 40 ms a message. So on Linux the connection sets
// TCP_QUICKACK after every read, which sends the pending ACK at once.
//
// # Ending a connection
//
// A connection asked to end (the context given to Connect ends, or
// Disconnect is called) has Config.DisconnectTimeout (1 s) for the
// DISCONNECT and any write under way; then its socket is closed,
// whatever the broker does. paho writes its DISCONNECT under the
// connection's packet lock and closes the socket only after; a write
// blocked on a broker that stopped reading (its socket buffers full)
// held both for ever. Closing the socket under it fails that write and
// every later one, and ends paho's reader, so Disconnect returns and
// the connection manager is done. While the connection runs, paho's
// pinger, which writes PINGREQ on a goroutine of its own, ends a
// connection whose broker took nothing for two keep-alive periods;
// Config.WriteTimeout, when set, bounds each write itself.
//
// # Reconnection
//
// The connection is retried for as long as its context lives, with
// exponential backoff and jitter: each wait is drawn from [d/2, d], d
// doubling from 100 ms to Config.ReconnectMax. A connection that drops
// within max(10 s, 2 × ReconnectMax) of coming up does not reset the
// backoff: autopaho on its own reconnects at once after any CONNACK, so
// two clients with the same client id (each connection takes the session
// over from the other, MQTT v5 reason 0x8E) would reconnect in a tight
// loop. Only a stable connection makes the next attempt immediate.
// Config.OnUp runs on every (re)connection, Config.OnDown when it drops,
// Config.OnServerDisconnect when the broker ends it with a reason code.
package mqttclient
