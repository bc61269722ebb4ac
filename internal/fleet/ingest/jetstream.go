package ingest

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/yukart/candec/internal/base/defaults"
)

// Defaults of JetStream.
const (
	// DefaultStream is the stream of the fleet's windows (deploy/nats).
	DefaultStream = "FLEET"
	// DefaultPartitions is the stream's partitions: its subject
	// transform's partition(16, 1).
	DefaultPartitions = 16
	// DefaultJetStreamGroup names the consumers (<group>-<k>) and their
	// priority group when Config.Group is empty.
	DefaultJetStreamGroup = "lake"
	// DefaultPinnedTTL is how long a partition stays with an instance
	// that has stopped asking for messages before another takes it.
	DefaultPinnedTTL = 30 * time.Second
	// DefaultBeat is how often an instance announces itself to its
	// group (presence).
	DefaultBeat = time.Second
	// MaxPartitions bounds JetStream.Partitions.
	MaxPartitions = 1024
)

// JetStream configures the JetStream source: Config.JetStream, instead
// of Config.Conn's MQTT broker.
type JetStream struct {
	// URLs are the cluster's servers, nats:// or tls://; the client
	// fails over between them. Config.Conn's CAFile, CertFile, KeyFile,
	// Username and Password say how to reach them.
	URLs []string
	// Stream is the stream of the windows; default DefaultStream.
	Stream string
	// Partitions is how many partitions the stream's subject transform
	// makes; default DefaultPartitions. Partition k's subjects are
	// PartitionSubject(k).
	Partitions int
	// PinnedTTL: a partition whose instance has not asked for messages
	// for this long goes to another; default DefaultPinnedTTL.
	PinnedTTL time.Duration
	// AckWait: the server sends a message again when it has not been
	// acknowledged within this; default 2×RollAge + 30 s, above the
	// longest a message waits for its commit.
	AckWait time.Duration
	// Beat is how often the instance announces itself; default
	// DefaultBeat.
	Beat time.Duration
}

// withDefaults fills in j's defaults; rollAge is Config.RollAge.
func (j JetStream) withDefaults(rollAge time.Duration) JetStream {
	j.Stream = cmp.Or(j.Stream, DefaultStream)
	j.Partitions = defaults.Positive(j.Partitions, DefaultPartitions)
	j.PinnedTTL = defaults.Positive(j.PinnedTTL, DefaultPinnedTTL)
	j.AckWait = defaults.Positive(j.AckWait, 2*rollAge+30*time.Second)
	j.Beat = defaults.Positive(j.Beat, DefaultBeat)
	return j
}

// validate reports what makes j unusable.
func (j JetStream) validate(rollAge time.Duration) error {
	j = j.withDefaults(rollAge)
	switch {
	case len(j.URLs) == 0:
		return fmt.Errorf("%w: no NATS server", ErrConfig)
	case j.Partitions > MaxPartitions:
		return fmt.Errorf("%w: %d partitions: at most %d", ErrConfig, j.Partitions, MaxPartitions)
	case !natsName(j.Stream):
		return fmt.Errorf("%w: stream %q: want letters, digits, '_' and '-'", ErrConfig, j.Stream)
	case j.AckWait <= rollAge:
		return fmt.Errorf("%w: ack wait %v: not above the roll age, %v (the server would send every window again before its commit)", ErrConfig, j.AckWait, rollAge)
	case j.PinnedTTL < 2*time.Second:
		return fmt.Errorf("%w: pinned TTL %v: at least 2s (the instance renews its pin every quarter of it)", ErrConfig, j.PinnedTTL)
	}
	for _, u := range j.URLs {
		if !strings.HasPrefix(u, "nats://") && !strings.HasPrefix(u, "tls://") {
			return fmt.Errorf("%w: NATS server %q: want nats://host:port or tls://host:port", ErrConfig, u)
		}
	}
	return nil
}

// natsName reports whether s is a stream, consumer or group name that
// is also one subject token.
func natsName(s string) bool {
	if s == "" || len(s) > 64 {
		return false
	}
	for _, c := range s {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-') {
			return false
		}
	}
	return true
}

// IsNATS reports whether broker names a NATS server (--broker
// nats://…), not an MQTT broker; several, comma-separated, are a
// cluster.
func IsNATS(broker string) bool {
	return strings.HasPrefix(broker, "nats://") || strings.HasPrefix(broker, "tls://")
}

// jsSource is the JetStream source of a running instance: a durable
// pull consumer per partition, of which it consumes those that its
// group's presence gives it (owner), pinned to it by the server.
type jsSource struct {
	in    *Ingest
	cfg   JetStream
	group string
	nc    *nats.Conn
	js    jetstream.JetStream
	st    jetstream.Stream
	parts []*jsPart
	pres  *presence
	gen   atomic.Uint64 // counts the connection's losses and errors: a delivery after one follows nothing
	start time.Time     // the first rebalance waits for the others' announcements
}

// jsPart is one partition: its consumer, and while the instance
// consumes it, its pull loop. The delivery fields are the loop's.
type jsPart struct {
	k    int
	cons jetstream.Consumer

	mu   sync.Mutex
	halt context.CancelFunc // ends the pull loop; nil when not consumed
	done chan struct{}      // closed when the pull loop has returned
	pin  string             // the pin of the last delivery

	lastD, gen uint64 // the last delivery's consumer sequence, and the connection's generation then

	leader     string    // the consumer's leader its last info named (setup's, then verify's)
	leaderSeen time.Time // when an info first named it
}

func (p *jsPart) pinNow() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.pin
}

func (p *jsPart) consuming() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.halt != nil
}

// pinIDHeader is the header in which the server names the pin a
// delivery of a pinned consumer was made under.
const pinIDHeader = "Nats-Pin-Id"

// consumerName is partition k's durable consumer.
func consumerName(group string, k int) string { return group + "-" + strconv.Itoa(k) }

// connectJetStream connects to the cluster and makes sure of the
// stream and of a consumer per partition.
func (in *Ingest) connectJetStream(ctx context.Context) (*jsSource, error) {
	cfg := in.cfg
	j := cfg.JetStream.withDefaults(cfg.RollAge)
	s := &jsSource{in: in, cfg: j, group: cfg.jsGroup(), pres: newPresence(cfg.ID, j.Beat)}
	opts := []nats.Option{nats.Name(ClientIDPrefix + cfg.ID), nats.Timeout(cfg.ConnectTimeout), nats.MaxReconnects(-1),
		nats.DisconnectErrHandler(func(*nats.Conn, error) { s.gen.Add(1) }),
		nats.ReconnectHandler(func(*nats.Conn) { s.gen.Add(1) }),
		nats.ErrorHandler(func(_ *nats.Conn, _ *nats.Subscription, err error) {
			if errors.Is(err, nats.ErrSlowConsumer) {
				s.gen.Add(1) // messages were dropped: no delivery follows
			}
			in.cfg.Log.Warn("NATS", "err", err)
		})}
	if c := cfg.Conn; c.CAFile != "" {
		opts = append(opts, nats.RootCAs(c.CAFile))
	}
	if c := cfg.Conn; c.CertFile != "" || c.KeyFile != "" {
		opts = append(opts, nats.ClientCert(c.CertFile, c.KeyFile))
	}
	if c := cfg.Conn; c.Username != "" {
		opts = append(opts, nats.UserInfo(c.Username, c.Password))
	}
	nc, err := nats.Connect(strings.Join(j.URLs, ","), opts...)
	if err != nil {
		return nil, fmt.Errorf("ingest: connect to %s: %w", strings.Join(j.URLs, ","), err)
	}
	s.nc = nc
	if err := s.setup(ctx); err != nil {
		nc.Close()
		return nil, err
	}
	return s, nil
}

// setup finds the stream, checks its partitions and makes the
// consumers.
func (s *jsSource) setup(ctx context.Context) error {
	js, err := jetstream.New(s.nc)
	if err != nil {
		return fmt.Errorf("ingest: %w", err)
	}
	s.js = js
	ctx, cancel := context.WithTimeout(ctx, s.in.cfg.ConnectTimeout)
	defer cancel()
	var st jetstream.Stream
	err = answered(ctx, func(ctx context.Context) (err error) {
		st, err = js.Stream(ctx, s.cfg.Stream)
		return err
	})
	if err != nil {
		return fmt.Errorf("ingest: stream %s: %w", s.cfg.Stream, err)
	}
	s.st = st
	if n, ok := streamPartitions(st.CachedInfo().Config); ok && n != s.cfg.Partitions {
		return fmt.Errorf("%w: the stream %s makes %d partitions, the ingest reads %d (--partitions)", ErrConfig, s.cfg.Stream, n, s.cfg.Partitions)
	}
	for k := range s.cfg.Partitions {
		var c jetstream.Consumer
		err := answered(ctx, func(ctx context.Context) (err error) {
			c, err = st.CreateOrUpdateConsumer(ctx, s.consumerConfig(k))
			return err
		})
		if err != nil {
			return fmt.Errorf("ingest: the consumer %s of stream %s: %w", consumerName(s.group, k), s.cfg.Stream, err)
		}
		// The consumer's leader now: a pin of none later is trusted
		// while it still leads (verify).
		p := &jsPart{k: k, cons: c, leaderSeen: s.in.cfg.Now()}
		if info := c.CachedInfo(); info != nil && info.Cluster != nil {
			p.leader = info.Cluster.Leader
		}
		s.parts = append(s.parts, p)
	}
	return nil
}

// firstAttempt is how long answered waits for the first answer; each
// attempt after it waits twice as long as the one before.
const firstAttempt = 2 * time.Second

// answered calls f until the cluster answers it, or ctx ends. A
// JetStream API request goes unanswered while the nodes elect their
// leaders or make their routes again (a cluster just started, a node
// just killed), and an answer of status 5xx says the same; f is sent
// again (the ingest's requests at setup are idempotent). Any other
// answer, a stream not found say, returns at once.
func answered(ctx context.Context, f func(context.Context) error) error {
	for wait := firstAttempt; ; wait *= 2 {
		actx, cancel := context.WithTimeout(ctx, wait)
		err := f(actx)
		cancel()
		if err == nil || ctx.Err() != nil || !unanswered(err) {
			return err
		}
		select { // no responders comes at once: not a busy loop
		case <-ctx.Done():
			return err
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// unanswered tells whether err means the cluster did not answer yet.
func unanswered(err error) bool {
	var api *jetstream.APIError
	if errors.As(err, &api) {
		return api.Code >= 500
	}
	return errors.Is(err, context.DeadlineExceeded) || errors.Is(err, nats.ErrTimeout) || errors.Is(err, nats.ErrNoResponders)
}

// consumerConfig is partition k's consumer: durable, explicit
// acknowledgements, sent again without end until acknowledged, pinned
// to one instance of the group at a time.
func (s *jsSource) consumerConfig(k int) jetstream.ConsumerConfig {
	return jetstream.ConsumerConfig{
		Durable: consumerName(s.group, k), FilterSubject: PartitionSubject(k),
		DeliverPolicy: jetstream.DeliverAllPolicy, AckPolicy: jetstream.AckExplicitPolicy,
		AckWait: s.cfg.AckWait, MaxDeliver: -1, MaxAckPending: s.in.cfg.MaxUnacked,
		PriorityPolicy: jetstream.PriorityPolicyPinned, PriorityGroups: []string{s.group}, PinnedTTL: s.cfg.PinnedTTL,
	}
}

// partitionRE finds the partition count in a subject transform.
var partitionRE = regexp.MustCompile(`\{\{\s*partition\(\s*(\d+)\s*,`)

// streamPartitions returns the partitions the stream's subject
// transforms make, when one does.
func streamPartitions(c jetstream.StreamConfig) (int, bool) {
	var dests []string
	if c.SubjectTransform != nil {
		dests = append(dests, c.SubjectTransform.Destination)
	}
	for _, src := range c.Sources {
		for _, t := range src.SubjectTransforms {
			dests = append(dests, t.Destination)
		}
	}
	for _, d := range dests {
		if m := partitionRE.FindStringSubmatch(d); m != nil {
			n, err := strconv.Atoi(m[1])
			return n, err == nil
		}
	}
	return 0, false
}

// receive takes a message of partition p as the consumer delivers it,
// in answer to a pull request sent at pulled.
func (s *jsSource) receive(p *jsPart, m jetstream.Msg, pulled time.Time) {
	md, err := m.Metadata()
	if err != nil {
		return // not a JetStream delivery: never acknowledged
	}
	pin := m.Headers().Get(pinIDHeader)
	gen := s.gen.Load()
	// The delivery follows the instance's last one of the partition:
	// nothing was delivered to anyone between. A new pin that follows
	// is the instance's own pin renewed (it had not asked for
	// PinnedTTL, as during a long commit): no other instance was sent
	// anything meanwhile.
	follow := gen == p.gen && p.lastD > 0 && md.Sequence.Consumer == p.lastD+1
	p.mu.Lock()
	newPin := pin != p.pin && !follow
	p.pin = pin
	p.mu.Unlock()
	pos := streamPos{part: p.k, seq: md.Sequence.Stream, first: md.NumDelivered == 1, newPin: newPin, follow: follow, pulled: pulled}
	p.lastD, p.gen = md.Sequence.Consumer, gen
	ref := ackRef{reply: m.Reply()}
	topic, ok := topicOfSubject(m.Subject())
	if !ok {
		topic = "" // matches no filter: counted (reason vehicle)
	}
	s.in.core.handleStream(topic, m.Data(), ref, pos)
}

// consume starts consuming partition p: its pull loop (pull).
func (s *jsSource) consume(p *jsPart) {
	ctx, halt := context.WithCancel(context.Background())
	done := make(chan struct{})
	p.mu.Lock()
	p.halt, p.done = halt, done
	p.mu.Unlock()
	go func() {
		defer close(done)
		s.pull(ctx, p)
	}()
	s.in.core.m.partitions.Inc()
	s.in.cfg.Log.Info("consuming a partition", "consumer", consumerName(s.group, p.k))
}

// maxPullBatch bounds the messages a pull request asks for: its
// messages' age is counted from the request, and the next request
// renews the pin, so a batch must take the handler a small part of
// the pin's TTL and of half the ack wait (500 windows took seconds
// under the race detector on a loaded machine).
const maxPullBatch = 100

// pull is partition p's consumption until ctx ends: one pull request
// at a time, for up to maxPullBatch messages, that lasts pullExpiry
// (the pin's renewal); its messages go to receive with the time the
// request was sent, before which the server cannot have sent them (the
// bound the checks against a partition's move rest on; the time a
// message reaches the handler can be much later, behind a commit). A
// request that ends in an error (the consumer's leader moved, the
// connection is down: no heartbeat; the pin lapsed) is made again, at
// once after a pin's end, after a pause growing to a second otherwise.
func (s *jsSource) pull(ctx context.Context, p *jsPart) {
	exp := s.pullExpiry()
	opts := []jetstream.FetchOpt{jetstream.FetchMaxWait(exp), jetstream.FetchHeartbeat(exp / 4), jetstream.FetchPriorityGroup(s.group)}
	batch := min(s.in.cfg.MaxUnacked, maxPullBatch)
	for fails := 0; ctx.Err() == nil; {
		pulled := s.in.cfg.Now()
		b, err := p.cons.Fetch(batch, opts...)
		if err == nil {
			s.deliver(ctx, p, b, pulled)
			err = b.Error()
		}
		if err == nil || errors.Is(err, jetstream.ErrPinIDMismatch) {
			fails = 0
			continue
		}
		fails++
		s.in.cfg.Log.Debug("pull", "consumer", consumerName(s.group, p.k), "err", err, "fails", fails)
		select {
		case <-ctx.Done():
		case <-time.After(min(time.Duration(fails)*100*time.Millisecond, time.Second)):
		}
	}
}

// pullExpiry is how long a pull request lasts: a quarter of the pin's
// TTL, so that the pin is renewed in time, and at most an eighth of
// the ack wait (a message's age is counted from its request's start).
func (s *jsSource) pullExpiry() time.Duration {
	return max(time.Second, min(s.cfg.PinnedTTL/4, s.cfg.AckWait/8))
}

// deliver hands the messages of batch b to receive until it ends or
// ctx does (those left are sent again after the ack wait).
func (s *jsSource) deliver(ctx context.Context, p *jsPart, b jetstream.MessageBatch, pulled time.Time) {
	for {
		select {
		case <-ctx.Done():
			return
		case m, ok := <-b.Messages():
			if !ok {
				return
			}
			s.receive(p, m, pulled)
		}
	}
}

// stop stops consuming partition p and waits until its pull loop has
// returned (at most WriteTimeout: a commit in its handler).
func (s *jsSource) stop(p *jsPart) bool {
	p.mu.Lock()
	halt, done := p.halt, p.done
	p.halt = nil
	p.mu.Unlock()
	if halt == nil {
		return false
	}
	s.in.core.m.partitions.Dec()
	halt()
	select {
	case <-done:
	case <-time.After(WriteTimeout):
	}
	return true
}

// unpin hands the partitions stopped over at once, rather than after
// PinnedTTL: their messages are committed.
func (s *jsSource) unpin(parts []*jsPart) {
	for _, p := range parts {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		err := s.st.UnpinConsumer(ctx, consumerName(s.group, p.k), s.group)
		cancel()
		if err != nil {
			s.in.cfg.Log.Debug("unpin", "consumer", consumerName(s.group, p.k), "err", err)
		}
	}
}
