// Package brokertest starts MQTT brokers for tests and gives them a
// recording MQTT v5 client.
//
// Start runs a real mosquitto (found on PATH, or at /usr/sbin/mosquitto
// where Debian installs it) on a free local port with a generated
// configuration: anonymous access, no persistence, set_tcp_nodelay (the
// report's 40 ms tail came from Nagle's algorithm in the broker), and a
// log file in the test's temporary directory that is printed when the
// test fails. The broker is stopped by its PID when the test ends.
// Stop and Restart kill and restart it on the same port, for tests of
// reconnection. Package internal/lab/mosquitto does the starting and
// stopping, for the bench's broker too.
//
// StartMosquitto starts mosquitto with a test's own options (a bridge, a
// plugin, persistence, a queue limit: anything package internal/lab/mosquitto
// configures) and stops it when the test ends, with its log's end in the
// output of a failed test; RequireMosquitto skips a test that needs the
// real broker where it is missing. Tests start brokers through these,
// Start and StartSecure; only a test that runs a whole configuration of
// its own (the shipped candec.conf, a broker without set_tcp_nodelay) or
// checks that a broker refuses to start calls internal/lab/mosquitto itself.
//
// StartSecure runs mosquitto the way the car does: a password file, a
// TLS listener whose CA and certificates the test generates, optionally
// requiring a client certificate (whose common name may be the user),
// and an ACL file. The embedded broker has none of these, so those
// tests skip without mosquitto.
//
// BuildPlugin compiles a mosquitto plugin from its C source (the fleet
// broker's deploy/mosquitto/candec_fleet.c) for a test's broker, and
// FleetConf turns deploy/mosquitto/fleet.conf into a test broker's
// settings with that plugin, so that tests run the configuration as
// shipped. Without a C compiler or mosquitto's plugin headers they skip
// the test, or fail it as below.
//
// StartProxy puts a TCP proxy before a broker, for tests of a broker
// that is connected but stops reading: after StopReading it no longer
// reads what its clients send (their writes block once the socket
// buffers are full) while what the broker sends still reaches them;
// ClientQueue and Backlog show the bytes waiting on either side (from
// the kernel, on Linux), ToClients what the broker sent.
//
// When mosquitto is not installed, Start falls back to the embedded broker
// of package broker and says so in the test log, unless the environment
// variable CANDEC_REQUIRE_MOSQUITTO is 1 (CI sets it), in which case the
// test fails: CI must exercise the broker the car runs. Setting
// CANDEC_TEST_EMBEDDED_BROKER to 1 uses the embedded broker even where
// mosquitto is installed, to check the fallback.
package brokertest
