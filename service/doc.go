// Package service is candec's production service, `candec run`: it
// subscribes to the raw CAN batches on the broker, decodes them, runs
// every signal value through its policy (package pipeline) and publishes
// the envelopes, one retained topic per signal.
//
// # Data path
//
//	MQTT client ──copy──▶ input queue ──▶ engine goroutine ──▶ outbox ──▶ publisher goroutine ──▶ broker
//	(raw batches)         (256 batches)   rawbatch.Parse,       per topic: up to 16 waiting
//	                                      seq loss, pipeline     (1 while disconnected)
//
// The MQTT client's receiving goroutine never waits for the decoder: it
// copies each batch into a free buffer of the input queue, and when the
// queue is full it drops the batch and counts its frames
// (candec_raw_frames_dropped_total). Lost frames are counted from gaps in
// the batches' seq; a seq that goes backwards is a bridge restart, not
// loss. A batch names no publisher, so when two publish on the raw topic
// at once (two bridges, a bridge and a replay) the service tells them
// apart by their seq: a batch joins the seq stream it continues, or the
// one it follows after a gap that the time since that stream's last
// batch makes plausible (at most 100 000 frames a second); anything else
// starts a stream of its own. Loss is thus counted per publisher and
// never exceeds what could have been sent; candec_raw_publishers shows
// how many streams sent a batch in the last 2 s, and while it is above 1
// the log says so once every 10 s. Invalid batches, like bridge
// restarts, are counted and logged at most once every 10 s; they never
// stop the service.
//
// One goroutine owns the pipeline engine. Its envelopes go to the
// outbox, which holds, per topic, the envelopes not yet handed to the
// broker, and a FIFO of topics in the order they came; a publisher
// goroutine drains it. While the broker is connected a topic may have up
// to 16 envelopes waiting (the engine handles a batch at once and may
// publish a topic several times in it: a 1 kHz signal ten times in a
// 10 ms batch); while it is not, only the latest:
// memory stays bounded by the number of topics however long the broker
// is away, and what the broker gets on its return is each topic's latest
// value. An envelope dropped for a newer one is counted
// (candec_envelopes_suppressed_total{reason="coalesced"}) and shows up as
// a seq gap to subscribers. The window stream is different: each window
// holds frames no other one has, so its messages are never coalesced; up
// to 512 of them (5 s of 10 ms windows) wait, connected or not, and only
// past that is the oldest dropped (reason="overflow").
//
// The engine wakes the publisher once it has handled a batch (or a
// tick), not at each envelope, and sooner only for a topic whose queue
// is half full. At QoS 0 the publisher then encodes every waiting
// envelope into the connection's buffer and writes them in one system
// call (mqttclient.Batcher): a batch's envelopes leave together, a
// microsecond or so apart in the buffer, and a lone envelope in a write
// of its own at once; nothing waits for a later batch or a timer. Each
// topic's envelopes keep their order, and the outbox's order holds
// across topics. Before, each envelope was a goroutine wake-up and a
// write of its own, which cost the decoder most of its CPU.
//
// At QoS 1 each publish goes through paho, on its own, and waits for
// the broker's PUBACK before the next one. A broker without TCP_NODELAY holds a small PUBACK back (Nagle's
// algorithm) until the service has acknowledged the raw batch it sent
// just before, and Linux delays that ACK by up to 40 ms: the mean publish
// latency was 100 ms instead of 7 ms, and values were coalesced at the
// car's load. The service's connection therefore acknowledges what it
// reads at once (package mqttclient, TCP_QUICKACK); giving mosquitto
// set_tcp_nodelay true (README, "Broker settings") is still best.
//
// # Time
//
// Policy time is frame time. Frames move the engine's clock; when they
// stop, a 10 ms tick moves it to the watermark (from clock_lag after the
// last batch on: before, the watermark is behind the clock anyway)
//
//	now = newest frame timestamp + wall time since its batch arrived − clock_lag
//
// so trailing values, heartbeats and stale marks still come out on a
// silent bus. The clock lag (default 100 ms) keeps the watermark behind
// any frame still in flight: as long as no batch arrives more than
// clock_lag late, the live service publishes exactly the envelopes
// (value, ts, seq) that an offline run of the same frames through the
// pipeline publishes (tested in equivalence_test.go). The price is that
// on a silent bus those envelopes leave clock_lag later.
//
// # Connection
//
// MQTT v5 through package mqttclient (autopaho), with TCP_NODELAY and
// reconnection with exponential backoff and jitter up to reconnect_max,
// for as long as the service runs: without a broker it keeps retrying,
// logs "connect failed; retrying with backoff" (at most once every 10 s),
// counts candec_broker_connect_failures_total by reason, and /healthz
// answers 503 "not connected … retrying". Each failed attempt is
// classified: network (nothing listens, no route), tls (a broker
// certificate the CA does not vouch for, a wrong host name, a refused
// handshake), auth (a CONNACK refusing the credentials or client id),
// timeout, other; the log line (at most one every 10 s) names the
// reason and a cause in a user's terms, and /healthz says the same. A
// connection that comes up but whose status publish the broker refuses
// (PUBACK 0x87: no write right on the status topic) or whose raw
// subscription it refuses (SUBACK 0x87) is reason acl: the service logs
// it the same way and tries again with backoff for as long as the
// connection lasts. mosquitto 2.0's acl_file refuses publishes but
// grants every subscription, then delivers nothing the user may not
// read: a missing read right on the raw topic shows there only as no
// raw batches (candec_raw_batches_total stays still). A connection that drops soon after it came
// up does not reset the backoff, so two instances started with the same
// client_id (each connection takes the session over from the other) do
// not reconnect in a tight loop: each says once every 10 s "another
// client took over client id …" and counts
// candec_broker_takeovers_total. The broker tells a takeover with MQTT
// v5 DISCONNECT reason 0x8E, or (mosquitto 2.0) by closing the
// connection without one, as it does when it goes down. One connection
// the broker closes sooner than max(10 s, 2 × reconnect_max) after
// accepting it is said as such at WARN ("the broker closed the
// connection N after accepting it: another client with client id …,
// or the broker going down") and not counted; a second one in a row,
// the reconnection accepted at once in between (a broker that went
// down refuses it), counts as a takeover.
// Lines about the connection (connected, lost, attempt failed, taken
// over) each come at most once every 10 s, with the number held back.
// The will is
// "offline", retained, on the status topic. On every connection the
// service publishes "online" (retained, QoS 1), then — on a reconnect —
// republishes every signal's last envelope (the broker may have lost its
// retained messages), then subscribes to the raw topic. Envelopes are
// published retained at the configured QoS with the MQTT v5 content type
// of their encoding (application/json or application/msgpack); the
// window stream is not retained.
//
// # Policy reloads
//
// ReloadPolicy (SIGHUP in `candec run`) reads the policy file again and
// has the engine goroutine swap it in between two batches, at the
// watermark (pipeline's Engine.SetPolicies): no restart, the same epoch,
// seq going on on every topic. A file that does not parse, or gives two
// signals one topic, leaves the running policy; the error line names the
// file and line, and candec_policy_reloads_total{result="error"} counts
// it. A good one logs "policy reloaded: N signals changed". Only the
// policy file is read again, not the config. ReloadOn serves a channel
// of signals: one that comes while a reload runs is logged and makes one
// more reload, and the end of its context ends it, even while a read of
// the file hangs, so a reload never holds up the shutdown.
//
// On shutdown (the context ends, on SIGINT or SIGTERM in `candec run`)
// the engine decodes the batches already queued, flushes the values its
// rate caps still hold back, the publisher hands everything to the
// broker, publishes "offline" and disconnects cleanly, all within
// shutdown_timeout; Run then returns nil. Queued batches are decoded
// for at most half of it (the rest are counted as dropped). The
// publishes have shutdown_timeout less the DISCONNECT's grace (1 s, or
// a quarter of a shorter timeout); then the connection ends and its
// socket is closed when the grace is over, so a broker that stopped
// reading (a write blocked on full socket buffers) cannot hold the
// shutdown: the log then says the last write was not delivered.
//
// # Under systemd
//
// With NOTIFY_SOCKET in the environment (a unit of Type=notify, such as
// deploy/systemd/candec.service) the service speaks the notify protocol
// (sd_notify(3)): READY=1 once the broker has acknowledged the raw
// subscription, so that units ordered after candec start when it
// decodes; STATUS= on each connection change; STOPPING=1 when the
// shutdown begins. With WATCHDOG_USEC set (WatchdogSec=) it sends
// WATCHDOG=1 every half of that interval, but only while the engine
// goroutine keeps ticking: the engine counts its batches and its 10 ms
// ticks, and a ping goes out only when the count has moved since the
// last one. A
// stuck engine stops the pings and the service manager restarts the
// service, even though its other goroutines still run.
//
// # Metrics
//
// With metrics_addr set, /metrics serves the Prometheus metrics (on the
// registry passed to New) and /healthz answers 200 once the broker
// connection is up and the raw subscription acknowledged, and 503
// otherwise, with the reason of the last failure. The metrics:
//
//	candec_raw_batches_total               batches received, valid or not
//	candec_raw_frames_total                frames in valid batches
//	candec_raw_frames_lost_total           frames lost, from seq gaps
//	candec_raw_frames_dropped_total        frames dropped here (input queue full, or left at shutdown)
//	candec_raw_batches_invalid_total{reason} batches that failed validation: short, version, flags, length, id, data_length, reserved, retained, other
//	candec_bridge_restarts_total           times the batch seq went backwards
//	candec_raw_publishers                  seq streams (publishers) active on the raw topic
//	candec_frames_unknown_id_total         frames of IDs not in the DBC
//	candec_frames_no_dbc_total             frames of an interface without a DBC (dbc IFACE=FILE names others)
//	candec_frames_decoded_total            frames decoded
//	candec_values_decoded_total            signal values decoded
//	candec_j1939_sources                   J1939 sources seen, with {sa} in the topic template
//	candec_j1939_topic_clashes_total       signals of J1939 sources not published: their topic was another's
//	candec_frames_late_total               frames behind the policy clock by at most 10 s, run at its time
//	candec_frames_clock_outliers_total{direction} future, past: frames over 10 s from the clock, dropped
//	candec_clock_discontinuities_total     new timebases of the frames' clock (policies restarted)
//	candec_envelopes_published_total{kind} value, trailing, heartbeat, stale, flush, republish, window
//	candec_envelopes_suppressed_total{reason} cap, unchanged, coalesced, overflow
//	candec_publish_errors_total            failed publishes (retried)
//	candec_publish_queue_depth             envelopes waiting for the broker (see "Data path")
//	candec_broker_connected                1 while connected
//	candec_broker_connections_total        connections made
//	candec_broker_connect_failures_total{reason} failed attempts, refused status publishes and subscriptions: network, tls, auth, acl, timeout, other
//	candec_policy_reloads_total{result}    policy reloads: ok, error (the running policy stayed)
//	candec_policy_loaded_timestamp_seconds when the running policy was read
//	candec_campaigns_total{result}         campaigns taken (campaign_topic): applied, or the reason refused
//	candec_campaign_version                version of the campaign whose policy runs; 0: none
//	candec_broker_takeovers_total          connections lost to another client with the same client id
//	candec_publish_latency_seconds         frame timestamp → publish (value, trailing, flush)
//
// # Configuration
//
// LoadConfig reads a YAML file of the keys below (examples/candec.yaml
// has them all), then the environment variables, then the flags, each
// overriding the one before. Key foo_bar is the flag --foo-bar and the
// variable CANDEC_FOO_BAR; dbc takes a YAML list or comma-separated
// names. Relative file names (dbc, policy, ca_file, cert_file, key_file)
// in the config file are relative to the file's directory, in flags and
// variables to the working directory. An unknown key in the file and an
// unknown CANDEC_ variable are both errors, with the nearest known name
// when there is one; the CANDEC_ variables that are not keys are listed
// in OtherEnv (CANDEC_CONFIG, and those of the tests, CI and the bench).
// The connection's keys, broker to keepalive, are mqttclient's
// (mqttclient.Keys): every other command that reaches a broker has the
// same flags and variables, but --password (the others read
// CANDEC_PASSWORD only) and CANDEC_CLIENT_ID (the decoder's id alone).
//
//	key               default                   meaning
//	broker            mqtt://127.0.0.1:1883     broker URL, mqtt:// or mqtts://
//	client_id         candec                    MQTT client id (deploy/mosquitto: the user name)
//	username          (none)                    broker user
//	password          (none)                    broker password (use CANDEC_PASSWORD)
//	ca_file           (system roots)            PEM CA bundle (mqtts)
//	cert_file         (none)                    PEM client certificate (mqtts)
//	key_file          (none)                    PEM client key (mqtts)
//	keepalive         30s                       MQTT keep-alive, whole seconds, 1s to 18h12m15s
//	qos               0                         QoS of the subscription and envelopes, 0 or 1
//	raw_topic         yukart/can/raw            raw batch topic (a filter)
//	status_topic      yukart/decoder/status     online/offline, retained
//	topic_template    yukart/vehicle/{signal}   signal topics: {signal}, {message}, {bus}, {sa}
//	encoding          json                      json or msgpack
//	window_topic      (none: off)               window stream topic
//	window_period     10ms                      window stream window, frame time
//	dbc               (required)                DBC files: [IFACE=]FILE, IFACE can<bus index>
//	policy            (built-in default)        policy file (docs/policy.md)
//	metrics_addr      127.0.0.1:9464            /metrics and /healthz; empty: off
//	log_format        text                      text or json
//	log_level         info                      debug, info, warn, error
//	clock_lag         100ms                     how far policy time trails the frames when they stop
//	reconnect_max     5s                        longest wait between connection attempts
//	shutdown_timeout  5s                        bound on the final flush and "offline"
//	vehicle           (none)                    this car's id, which a campaign's glob must match
//	campaign_topic    (none: off)               signed policy campaigns (docs/campaigns.md)
//	campaign_key      (none)                    the public key file campaigns are signed with
//	campaign_state    (none)                    the file keeping the applied campaign
//	campaign_ack_topic yukart/decoder/campaign  the car's acknowledgement, retained
//
// With campaign_topic set, vehicle, campaign_key and campaign_state are
// required, and neither campaign topic may be one of the decoder's own
// or be matched by raw_topic or the signal topics. A campaign applied
// wins over the policy file (a SIGHUP then keeps it, ErrCampaignPolicy);
// docs/campaigns.md says how to go back.
//
// No number is silently replaced by a default: qos must be 0 or 1,
// window_period and shutdown_timeout above 0, clock_lag 0 or more, and
// reconnect_max at least 100ms. `candec run -h` shows each flag's default.
// raw_topic must match none of the decoder's own topics (status_topic,
// window_topic, any topic topic_template can give, a level with a
// placeholder standing for any level): the decoder would receive its own
// messages as raw batches. The raw subscription asks the broker for no
// retained message (MQTT v5 retain handling 2), and a delivery that
// still carries the retain flag is dropped and counted in
// candec_raw_batches_invalid_total{reason="retained"}: a retained batch
// is an old one, which every start would publish again as fresh.
//
// A bad value stops start-up with one line that names where it was set,
// the key, and what is wrong:
//
//	candec.yaml:7: qos: must be 0 or 1, got 2
//	environment CANDEC_CLOCK_LAG: clock_lag: not a duration (like 100ms or 5s): "fast"
//	environment CANDEC_BORKER: borker: unknown variable; did you mean CANDEC_BROKER? (known: …)
//	flag --broker: broker: bad broker URL "127.0.0.1:1883": must be mqtt://host:port or mqtts://host:port
//
// # Cost
//
// In steady state the service allocates nothing per frame or per
// envelope of its own (pinned by TestHandleBatchAllocs); the MQTT client
// allocates a packet per publish and per received batch.
package service
