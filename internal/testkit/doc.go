// Package testkit holds the small helpers that tests of several
// packages share and that no product code needs: a buffer a command
// writes while the test reads it, a TCP server that accepts and never
// answers (the object store or broker that hangs), a broker URL where
// nothing listens, and a file written for a test.
//
// Brokers for tests are package brokertest's; this package starts no
// server that speaks a protocol.
package testkit
