// Package natsserver pins the fleet's NATS server: nats-server, built
// from its Go module (go tool -n nats-server in this directory prints
// the cached binary's path, building it first when needed). It is a
// module of its own so that nats-server's dependencies stay out of
// candec's go.mod; package natscluster (the bench's and the tests'
// cluster) finds the binary through it.
package natsserver
