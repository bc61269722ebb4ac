// Package natstest starts the fleet's NATS cluster for a test: N nodes
// of nats-server on free ports of 127.0.0.1, from the repository's own
// configuration (deploy/nats) with certificates of a CA made for the
// test, and the fleet's stream with its source (package natscluster does
// the work).
//
// nats-server is built from its Go module (natscluster.Find, `go tool
// -n nats-server`; .ci/run builds it in the background first, so the
// tests find it cached). Where it cannot be built (no go command, no
// module proxy) the test is skipped with the reason, or fails when
// CANDEC_REQUIRE_NATS is 1, as CI sets it.
//
//	c := natstest.Start(t, natstest.Options{Cars: []string{"kart01"}})
//	nc := natstest.Connect(t, c, "ingest")
//	c.Kill(0) … c.Restart(ctx, 0)
//
// The cluster is stopped, by its nodes' PIDs, when the test ends; a
// failed test's log names the nodes' logs.
package natstest
