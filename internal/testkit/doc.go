// Package testkit holds the small helpers that tests of several
// packages share and that no product code needs: a buffer a command
// writes while the test reads it, and a TCP server that accepts and
// never answers (the object store or broker that hangs).
//
// Brokers for tests are package brokertest's; this package starts no
// server that speaks a protocol.
package testkit
