// Package natscluster runs the fleet's cloud tier on NATS as a private
// cluster on one machine: the bench's (candec bench --fleet --engine
// nats) and the tests' (package natstest) N nodes of nats-server, from
// the repository's own configuration (deploy/nats).
//
// # What it runs
//
// Start makes a certificate authority for the run and a certificate
// for every node (127.0.0.1, serverAuth and clientAuth: the nodes' routes
// show them too), writes the cars' lines into accounts.conf (the file's
// own, between its "cars: begin" and "cars: end" marks; CarUser is the
// line) and starts every node from deploy/nats/fleet.conf with its
// values in the environment, as the deployment does (FLEET_NODE,
// FLEET_LISTEN, …; the file's comments say which). Ports are free ones
// of 127.0.0.1, kept for a node's restart. It returns once the cluster
// has a JetStream meta leader on every node's word, and then makes, as
// the operator would and in this order, MQTT's message stream
// ($MQTT_msgs, mqtt-msgs.json), FLEET's durable source consumer on it
// (source-consumer.json) and the fleet's stream (stream.json), each
// step with its own ready time and every request its own deadline.
// FLEET takes the cars' windows only through that consumer, which
// $MQTT_msgs deletes a window for once FLEET has stored it (ReadDeploy
// checks the three fit together; Leader names a stream's leader).
//
// Identity issues a client certificate of the run's CA: the common name
// is the user (verify_and_map), "ingest", "fleet-admin" or a car's id.
//
// # Life cycle
//
// Every node is a child process (package child), stopped by its PID.
// Kill sends SIGKILL to one node and waits for it to exit; Restart
// starts it again on the same ports and store, and waits until its
// /healthz says it has caught up. Stop stops them all.
//
// # Finding nats-server
//
// Find runs `go tool -n nats-server` in the natsserver module
// (internal/lab/natscluster/natsserver, a module of its own so that
// nats-server's dependencies stay out of candec's go.mod): go builds it
// once (about 20 s here) and prints the cached binary's path after.
package natscluster
