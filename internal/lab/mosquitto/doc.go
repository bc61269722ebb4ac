// Package mosquitto runs a private mosquitto broker: the bench's broker
// and the tests' broker are both started here.
//
// # What it runs
//
// Find looks for the binary on PATH, then in /usr/sbin and
// /usr/local/sbin, where Debian installs it (a user's PATH often lacks
// sbin). Start writes a configuration to its own directory (a listener
// on 127.0.0.1 only, anonymous access, set_tcp_nodelay true, no
// persistence, a log file) and starts mosquitto on a free port, or on a
// given one to restart a broker where its clients expect it. It returns
// once the broker accepts connections. Options add what a secured broker
// has: a password file, a TLS listener that may require a client
// certificate (and take the user name from it), an ACL file.
//
// Without set_tcp_nodelay, Nagle's algorithm in the broker adds a 40 ms
// tail to small messages, which is what the car team's bus bench
// measured.
//
// # Life cycle
//
// A Process is stopped by its PID: SIGTERM, then SIGKILL after a
// timeout. On Linux the kernel also kills it when the program that
// started it dies, so a crashed bench or test leaves no broker behind
// (package child).
package mosquitto
