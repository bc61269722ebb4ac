// Package mqttclient is candec's one seam to MQTT: it turns a broker URL,
// credentials and TLS files into an auto-reconnecting MQTT v5 connection
// (github.com/eclipse/paho.golang/autopaho), and gives the small
// publisher that replay needs.
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
// reads the socket option back. The broker must do the same
// (mosquitto's set_tcp_nodelay true). Where it does not, it holds each
// small packet (a PUBACK) until the client has acknowledged the data it
// sent before, and Linux delays that ACK by up to 40 ms when it expects
// to send data soon: a QoS 1 publisher, waiting for each PUBACK, then
// waited up to 40 ms a message. So on Linux the connection sets
// TCP_QUICKACK after every read, which sends the pending ACK at once.
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
