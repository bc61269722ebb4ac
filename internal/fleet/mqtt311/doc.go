// Package mqtt311 is a minimal MQTT 3.1.1 client: it connects,
// subscribes at QoS 0 and hands each message's topic and payload to a
// callback, from one goroutine that reads the connection, without
// allocating per message; it publishes at QoS 1, retained or not,
// waiting for the PUBACK or not.
//
// # Who uses it
//
// The fleet's cloud tier may be the NATS cluster of deploy/nats, whose
// nodes speak MQTT 3.1.1 only: `candec campaign push --mqtt 3.1.1` and
// `campaign status --mqtt 3.1.1` (package rollout) speak it through
// this client. The bench subscribes with it, and its fleet's cars
// publish with it.
//
// # Why not paho
//
// candec's own clients use paho (package mqttclient), which speaks MQTT
// 5. A bench on a two-core machine runs eight subscribers beside the
// broker it measures, and a general client's cost per message (a packet
// allocated, a goroutine hand-off, a callback slice copied) becomes a
// share of the CPU the broker competes for: the observer changes what
// it observes. This client reads each packet into one reusable buffer
// and calls the callback in place. Its packets are package
// mqttclient/wire's, the codec mqttclient's Batcher writes with; paho's
// own packet reader costs some 70 times as much a message (wire's
// BenchmarkReadPublish: 40 against 2,841 ns, 0 against 22 allocations).
//
// # What it does not do
//
// QoS 2, will messages, MQTT v5 properties and reconnection: a client
// that loses its connection has failed, and says so (Client.Err). It
// reaches a broker as every candec client does (mqttclient.Settings:
// TLS, a user name and password, TCP_NODELAY), so a bench against the
// car's broker measures the same path.
package mqtt311
