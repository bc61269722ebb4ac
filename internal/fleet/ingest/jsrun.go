package ingest

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// runJetStream is Run on a JetStream cluster: the instance announces
// itself to its group, consumes the partitions the group's presence
// gives it, commits, acknowledges, and at the end hands its partitions
// over.
func (in *Ingest) runJetStream(ctx context.Context) error {
	s, err := in.connectJetStream(ctx)
	if err != nil {
		return err
	}
	in.core.mu.Lock()
	in.core.ack = s.ackAll
	in.core.verify = s.verify
	in.core.mu.Unlock()
	sub, err := s.nc.Subscribe(PresenceSubject(s.group), func(m *nats.Msg) { s.pres.heard(string(m.Data), in.cfg.Now()) })
	if err != nil {
		s.nc.Close()
		return fmt.Errorf("ingest: subscribe to %s: %w", PresenceSubject(s.group), err)
	}
	defer sub.Unsubscribe()
	s.start = in.cfg.Now()
	s.announce()
	in.cfg.Log.Info("connected", "servers", s.nc.ConnectedUrlRedacted(), "stream", s.cfg.Stream, "partitions", s.cfg.Partitions, "group", s.group)
	in.once.Do(func() { close(in.ready) })
	tick := time.NewTicker(max(min(in.cfg.RollAge/4, s.cfg.Beat/2), time.Millisecond))
	defer tick.Stop()
	next := in.cfg.Now()
	for {
		select {
		case <-ctx.Done():
			return s.end(in.core.close)
		case <-in.core.failed:
			s.stopAll()
			s.nc.Close()
			return in.core.err
		case <-tick.C:
			in.core.rollIfOld(in.cfg.Now())
			if now := in.cfg.Now(); !now.Before(next) {
				next = now.Add(s.cfg.Beat)
				s.announce()
				if err := s.rebalance(now); err != nil {
					in.core.mu.Lock()
					in.core.fail(err)
					in.core.mu.Unlock()
				}
			}
		}
	}
}

// end stops consuming, makes the last commit (the caller's), and once
// it is acknowledged hands the partitions over.
func (s *jsSource) end(commit func() error) error {
	held := s.stopAll()
	err := commit()
	if err == nil {
		if ferr := s.nc.FlushTimeout(WriteTimeout); ferr != nil {
			s.in.cfg.Log.Warn("the last acknowledgements may not have reached the server: it sends those windows again, which are skipped", "err", ferr)
		}
		s.unpin(held)
	}
	s.nc.Close()
	return err
}

// stopAll stops consuming every partition and returns those it
// consumed.
func (s *jsSource) stopAll() []*jsPart {
	var held []*jsPart
	for _, p := range s.parts {
		if s.stop(p) {
			held = append(held, p)
		}
	}
	return held
}

// announce tells the group that the instance lives.
func (s *jsSource) announce() {
	if err := s.nc.Publish(PresenceSubject(s.group), []byte(s.in.cfg.ID)); err != nil {
		s.in.cfg.Log.Debug("announce", "err", err)
	}
}

// rebalance consumes the partitions the live instances give this one
// and hands the others over: a partition given to another is stopped,
// committed, then unpinned. The first waits for the others to have
// announced themselves (presenceBeats beats).
func (s *jsSource) rebalance(now time.Time) error {
	if now.Sub(s.start) < presenceBeats*s.cfg.Beat/2 {
		return nil
	}
	live := s.pres.live(now)
	var drop []*jsPart
	for _, p := range s.parts {
		mine := owner(live, p.k) == s.in.cfg.ID
		switch c := p.consuming(); {
		case mine && !c:
			s.consume(p)
		case !mine && c:
			s.stop(p)
			drop = append(drop, p)
		}
	}
	if len(drop) == 0 {
		return nil
	}
	if err := s.in.core.commitNow(); err != nil {
		return err
	}
	s.unpin(drop)
	for _, p := range drop {
		s.in.cfg.Log.Info("handed a partition over", "consumer", consumerName(s.group, p.k), "live", live)
	}
	return nil
}

// ackAll acknowledges refs, in order; it returns how many it sent.
func (s *jsSource) ackAll(refs []ackRef) int {
	n := 0
	for _, r := range refs {
		if r.reply == "" {
			continue
		}
		if err := s.nc.Publish(r.reply, ackBody); err != nil {
			break // the connection failed: the server sends the rest again
		}
		n++
	}
	return n
}

// ackBody is JetStream's acknowledgement.
var ackBody = []byte("+ACK")

// errPartitionMoved: a partition the commit holds messages of is
// pinned to another instance now.
var errPartitionMoved = errors.New("a partition moved to another instance")

// verify is the core's check before a manifest that no message the
// commit holds can have been sent to another instance (partitionHeld,
// for each partition whose messages the commit holds: oldest not zero,
// the earliest a message held was pulled). It asks the consumers at
// once, and returns their acknowledgement floors (0 where not asked or
// not answered).
func (s *jsSource) verify(oldest []time.Time) ([]uint64, error) {
	infos := s.consumerInfos(oldest, s.in.cfg.Now())
	now := s.in.cfg.Now()
	floors := make([]uint64, len(s.parts))
	for _, p := range s.parts {
		r := infos[p.k]
		pinned, steady := "", false
		if r.info != nil {
			floors[p.k] = r.info.AckFloor.Stream
			pinned, steady = s.pinOf(p, r.info, now)
		}
		if oldest[p.k].IsZero() {
			continue
		}
		steady = steady && p.leaderSeen.Before(oldest[p.k])
		if err := partitionHeld(consumerName(s.group, p.k), pinned, p.pinNow(), steady, r.err, now.Sub(oldest[p.k]), s.cfg.AckWait); err != nil {
			return nil, err
		}
	}
	return floors, nil
}

// pinOf returns the pin info names in the instance's group, and
// whether the consumer's leader is the one its last info named (then
// p.leaderSeen is when the instance first saw it lead); it remembers
// the leader, seen at now.
func (s *jsSource) pinOf(p *jsPart, info *jetstream.ConsumerInfo, now time.Time) (pinned string, steady bool) {
	for _, g := range info.PriorityGroups {
		if g.Group == s.group {
			pinned = g.PinnedClientID
		}
	}
	leader := ""
	if info.Cluster != nil {
		leader = info.Cluster.Leader
	}
	if steady = leader != "" && leader == p.leader; !steady {
		p.leader, p.leaderSeen = leader, now
	}
	return pinned, steady
}

// infoAnswer is a consumer's info, or why the server gave none.
type infoAnswer struct {
	info *jetstream.ConsumerInfo
	err  error
}

// youngInfoTimeout bounds the wait for the info of a consumer whose
// messages held are young, or that none are held of: its answer gives
// only the floor, which can wait for the next commit.
const youngInfoTimeout = 2 * time.Second

// consumerInfos asks, at once, the consumer of every partition the
// instance consumes or holds messages of (oldest not zero) for its
// info. A partition whose messages are no longer young needs the
// answer: it is asked again after a failure (the consumer's leader is
// being elected: about 10 s on a loaded machine) for up to
// WriteTimeout; the others, once, for up to youngInfoTimeout.
func (s *jsSource) consumerInfos(oldest []time.Time, now time.Time) []infoAnswer {
	out := make([]infoAnswer, len(s.parts))
	var wg sync.WaitGroup
	for _, p := range s.parts {
		taken := !oldest[p.k].IsZero()
		if !taken && !p.consuming() {
			continue
		}
		wait := youngInfoTimeout
		if taken && !young(oldest[p.k], now, s.cfg.AckWait) {
			wait = WriteTimeout
		}
		wg.Go(func() { out[p.k] = askInfo(p.cons, wait) })
	}
	wg.Wait()
	return out
}

// askInfo asks c for its info until it answers or wait has passed,
// each request bounded by youngInfoTimeout.
func askInfo(c jetstream.Consumer, wait time.Duration) infoAnswer {
	deadline := time.Now().Add(wait)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), min(youngInfoTimeout, time.Until(deadline)))
		info, err := c.Info(ctx)
		cancel()
		if err == nil {
			return infoAnswer{info: info}
		}
		if time.Until(deadline) < 100*time.Millisecond {
			return infoAnswer{err: err}
		}
		time.Sleep(100 * time.Millisecond)
	}
}
