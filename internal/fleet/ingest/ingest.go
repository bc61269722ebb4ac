package ingest

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"sync"
	"sync/atomic"
	"time"

	"github.com/eclipse/paho.golang/autopaho"
	"github.com/eclipse/paho.golang/paho"
	"github.com/eclipse/paho.golang/paho/session/state"

	"github.com/yukart/candec/mqttclient"
)

// Ingest is one instance: New opens its lake and resumes from its
// manifests, Run takes the messages until its context ends.
type Ingest struct {
	cfg     Config
	core    *core
	close   func() error // closes the lake
	ready   chan struct{}
	once    sync.Once
	leaving atomic.Bool // no subscription any more (Config.Leave)
	subs    *subIDs     // tells a takeover (takeover.go)
	// subscribed: the broker granted the subscription once; a session
	// it kept since holds it.
	subscribed atomic.Bool
	told       atomic.Bool // a takeover was told
}

// New checks cfg, opens the lake (shared with the other instances:
// lake.Config.Owner is cfg.ID) and resumes from the instance's record:
// an unfinished commit's files are removed, the windows committed
// remembered.
func New(cfg Config) (*Ingest, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	cfg = cfg.withDefaults()
	l, err := openLake(cfg)
	if err != nil {
		return nil, err
	}
	in, err := newIngest(cfg, l)
	if err != nil {
		l.close()
		return nil, err
	}
	return in, nil
}

// newIngest builds an instance on an open lake.
func newIngest(cfg Config, l openedLake) (*Ingest, error) {
	rec := newRecord(l.store, cfg.ID)
	c, err := newCore(cfg, l.newWriter, rec, newMetrics(cfg.Registerer, cfg.ID))
	if err != nil {
		return nil, err
	}
	r, err := rec.resume()
	if err != nil {
		return nil, err
	}
	if r.removed > 0 {
		cfg.Log.Info("removed the files of an unfinished commit", "files", r.removed)
	}
	c.resume(r)
	if j := cfg.JetStream; j != nil {
		var names []string
		j := j.withDefaults(cfg.RollAge)
		for k := range j.Partitions {
			names = append(names, consumerName(cfg.jsGroup(), k))
		}
		c.streams = newStreamRecord(names, j.AckWait)
		c.streams.resume(r.streams)
	}
	return &Ingest{cfg: cfg, core: c, close: l.close, ready: make(chan struct{}), subs: newSubIDs()}, nil
}

// Ready is closed once the broker has accepted the first subscription:
// from then on, it keeps the instance's messages while it is away.
func (in *Ingest) Ready() <-chan struct{} { return in.ready }

// Close closes the lake of an instance that is not run (Run closes
// it); a second Close does nothing.
func (in *Ingest) Close() error { return in.close() }

// Counters returns the counts so far; after Run, the final ones.
func (in *Ingest) Counters() Counters { return in.core.counters() }

// Run connects, subscribes and takes the messages until ctx ends: it
// then stops taking them, commits what it took, acknowledges that,
// disconnects and returns nil. A commit that fails ends it with the
// error, nothing of that commit acknowledged. Run closes the lake.
func (in *Ingest) Run(ctx context.Context) (err error) {
	defer func() {
		if cerr := in.close(); err == nil {
			err = cerr
		}
	}()
	if in.cfg.JetStream != nil {
		return in.runJetStream(ctx)
	}
	sess := &ackSession{SessionManager: state.NewInMemory(), batcher: &mqttclient.Batcher{}}
	// Known in paho's reading goroutine, before the connection is
	// reported down; the core's lock may be held by a commit meanwhile.
	sess.takenOver = func() {
		in.core.takenOver.Store(true)
		go in.takeover("MQTT v5 DISCONNECT reason 0x8E, session taken over")
	}
	sess.afterSilentLoss = func() {
		until := in.cfg.Now().Add(holdAfterSilentLoss)
		in.core.hold(until)
		in.cfg.Log.Warn("the broker had closed the connection without a word: commits held back until the new one has lasted (another client may have taken the session)", "until", until)
	}
	in.core.mu.Lock()
	in.core.ack = sess.ackAll
	in.core.mu.Unlock()
	cm, err := in.connect(ctx, sess)
	if err != nil {
		return err
	}
	tick := time.NewTicker(max(min(in.cfg.RollAge/4, time.Second), time.Millisecond))
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			left := in.cfg.Leave && in.leave(cm)
			err := in.core.close()
			disconnect(cm)
			if err == nil && left {
				err = in.endSession()
			}
			return err
		case <-in.core.failed:
			disconnect(cm)
			return in.core.err
		case <-tick.C:
			in.core.rollIfOld(in.cfg.Now())
		}
	}
}

// connect connects with a persistent session, sess, and subscribes on
// the first connection and on any whose session the broker did not
// keep; it returns once the first connection is up.
func (in *Ingest) connect(ctx context.Context, sess *ackSession) (*autopaho.ConnectionManager, error) {
	cfg := in.cfg
	settings := cfg.Conn
	settings.ClientID = ClientIDPrefix + cfg.ID
	attempts := mqttclient.NewAttempts()
	ac, err := mqttclient.Config{
		Settings:       settings,
		ConnectTimeout: cfg.ConnectTimeout,
		WriteTimeout:   WriteTimeout,
		Batcher:        sess.batcher,
		OnConnectError: attempts.Record,
		OnUp: func(cm *autopaho.ConnectionManager, ca *paho.Connack) {
			// The broker keeps the subscription in the session; a new
			// one would hide a takeover (takeover.go).
			if !in.subscribed.Load() || !ca.SessionPresent {
				subID := ca.Properties == nil || ca.Properties.SubIDAvailable
				go in.subscribe(ctx, cm, subID)
			}
		},
		OnPublish: func(p *paho.Publish) { in.receive(sess, p) },
	}.AutopahoConfig()
	if err != nil {
		return nil, fmt.Errorf("ingest: %w", err)
	}
	ac.CleanStartOnInitialConnection = false
	// A session taken over is not taken back: reconnecting would take
	// it from the other client, which would take it again, each writing
	// what it gets.
	ac.OnConnectionDown = func() bool { return !sess.wasTakenOver() && !in.core.takenOver.Load() }
	ac.SessionExpiryInterval = uint32(min(cfg.SessionExpiry/time.Second, 1<<32-1))
	ac.Session = sess
	ac.ConnectPacketBuilder = func(cp *paho.Connect, _ *url.URL) (*paho.Connect, error) {
		if cp.Properties == nil {
			cp.Properties = &paho.ConnectProperties{}
		}
		rm := uint16(ReceiveMaximum)
		cp.Properties.ReceiveMaximum = &rm
		return cp, nil
	}
	// The connection outlives ctx by the final commit's acknowledgements;
	// Run disconnects it.
	cm, err := autopaho.NewConnection(context.WithoutCancel(ctx), ac)
	if err != nil {
		return nil, fmt.Errorf("ingest: %w", err)
	}
	if err := attempts.Await(ctx, cm, settings.Broker, cfg.ConnectTimeout); err != nil {
		disconnect(cm)
		return nil, fmt.Errorf("ingest: %w", err)
	}
	return cm, nil
}

// receive takes a message as paho delivers it: the window path's entry.
func (in *Ingest) receive(sess *ackSession, p *paho.Publish) {
	if p.Properties != nil && in.subs.foreign(p.Properties.SubscriptionIdentifier) {
		in.core.takenOver.Store(true)
		go in.takeover(fmt.Sprintf("a message of subscription %d, which another client made in this session (this instance's is %d)",
			*p.Properties.SubscriptionIdentifier, in.subs.own))
		return // not acknowledged: the broker sends it to the other
	}
	ref := ackRef{gen: sess.generation(), id: p.PacketID}
	if p.Retain {
		in.core.skip(ReasonRetained, ref)
		return
	}
	in.core.handle(p.Topic, p.Payload, ref)
}

// takeover stops the instance whose session another client took over,
// as how says.
func (in *Ingest) takeover(how string) {
	if !in.told.CompareAndSwap(false, true) {
		return
	}
	id := ClientIDPrefix + in.cfg.ID
	in.cfg.Log.Error("another client took over this instance's session: stopping without committing what it holds (the broker sends that to the other); give each instance its own --id and certificate",
		"client_id", id, "broker", in.cfg.Conn.Broker, "how", how)
	in.core.takeover(id, how)
}

// subscribe subscribes to the filters at QoS 1, with the run's
// subscription identifier when the broker takes one (subID); a refusal
// ends the instance.
func (in *Ingest) subscribe(ctx context.Context, cm *autopaho.ConnectionManager, subID bool) {
	if in.leaving.Load() {
		return
	}
	sub := &paho.Subscribe{}
	if subID {
		sub.Properties = &paho.SubscribeProperties{SubscriptionIdentifier: &in.subs.own}
	}
	for _, f := range in.cfg.Filters {
		sub.Subscriptions = append(sub.Subscriptions, paho.SubscribeOptions{Topic: in.cfg.subscription(f), QoS: 1})
	}
	sctx, cancel := context.WithTimeout(ctx, in.cfg.ConnectTimeout)
	defer cancel()
	ack, err := cm.Subscribe(sctx, sub)
	if err != nil {
		if !errors.Is(err, context.Canceled) {
			in.cfg.Log.Warn("subscribe", "err", err) // the next connection subscribes again
		}
		return
	}
	for i, rc := range ack.Reasons {
		if rc >= 0x80 && i < len(sub.Subscriptions) {
			in.core.mu.Lock()
			in.core.fail(fmt.Errorf("ingest: the broker refused the subscription to %s (reason 0x%02X)", sub.Subscriptions[i].Topic, rc))
			in.core.mu.Unlock()
			return
		}
	}
	topics := make([]string, len(sub.Subscriptions))
	for i, s := range sub.Subscriptions {
		topics[i] = s.Topic
	}
	in.subscribed.Store(true)
	in.cfg.Log.Info("subscribed", "client_id", ClientIDPrefix+in.cfg.ID, "filters", topics)
	in.once.Do(func() { close(in.ready) })
}

// Leaving a group: how long the messages already on their way may take
// to come, and how long the instance waits for them at most.
const (
	leaveQuiet = time.Second
	leaveMax   = time.Minute
)

// leave unsubscribes, then takes what comes until nothing has come for
// leaveQuiet: the messages the broker had queued for the instance.
//
// It reports whether the instance left: unsubscribed, then a quiet
// second. Otherwise its session stays, with what the broker still
// queues there, for the next start of the same id.
func (in *Ingest) leave(cm *autopaho.ConnectionManager) bool {
	in.leaving.Store(true)
	unsub := &paho.Unsubscribe{}
	for _, f := range in.cfg.Filters {
		unsub.Topics = append(unsub.Topics, in.cfg.subscription(f))
	}
	ctx, cancel := context.WithTimeout(context.Background(), in.cfg.ConnectTimeout)
	defer cancel()
	if _, err := cm.Unsubscribe(ctx, unsub); err != nil {
		in.cfg.Log.Warn("leave: unsubscribe failed: the session stays", "err", err)
		return false
	}
	last, quiet := in.Counters().Messages, time.Now()
	for start := time.Now(); time.Since(start) < leaveMax; time.Sleep(leaveQuiet / 10) {
		if n := in.Counters().Messages; n != last {
			last, quiet = n, time.Now()
		} else if time.Since(quiet) >= leaveQuiet {
			in.cfg.Log.Info("left the group: unsubscribed, the messages on their way taken")
			return true
		}
	}
	in.cfg.Log.Warn("leave: messages still coming after the wait: the session stays", "wait", leaveMax)
	return false
}

// endSession ends the instance's session on the broker: a connection
// with a clean start and no expiry, at once closed.
func (in *Ingest) endSession() error {
	settings := in.cfg.Conn
	settings.ClientID = ClientIDPrefix + in.cfg.ID
	attempts := mqttclient.NewAttempts()
	cm, err := mqttclient.Connect(context.Background(), mqttclient.Config{Settings: settings, ConnectTimeout: in.cfg.ConnectTimeout, OnConnectError: attempts.Record})
	if err != nil {
		return fmt.Errorf("ingest: end the session: %w", err)
	}
	defer disconnect(cm)
	if err := attempts.Await(context.Background(), cm, settings.Broker, in.cfg.ConnectTimeout); err != nil {
		return fmt.Errorf("ingest: end the session: %w", err)
	}
	return nil
}

// WriteTimeout bounds each write to the broker (a commit's
// acknowledgements go in one): a broker that has not taken it within
// this is not reading; the connection is closed, and the broker sends
// the windows not acknowledged again, which the lake's manifests skip.
// It bounds the ingest's shutdown whatever the broker does.
const WriteTimeout = 10 * time.Second

// disconnect ends the connection cleanly: the broker keeps the session.
func disconnect(cm *autopaho.ConnectionManager) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	_ = cm.Disconnect(ctx)
}
