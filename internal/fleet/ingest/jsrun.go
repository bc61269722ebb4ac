package ingest

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/nats-io/nats.go"
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
			if err := s.consume(p); err != nil {
				return err
			}
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
// commit holds can have been sent to another instance: a message goes
// to another only once --ack-wait has passed since it was sent here,
// and only to the partition's pin. So each partition whose messages the
// commit holds (oldest not zero) must be pinned to this instance, or to
// none (a pin is given with a delivery: none means nobody was sent
// anything since), or its messages must all have been stored within
// half the ack wait (the partition is being handed over to an instance
// that waited for it). It returns the consumers' acknowledgement floors
// (0 where not asked).
func (s *jsSource) verify(oldest []time.Time) ([]uint64, error) {
	floors := make([]uint64, len(s.parts))
	for _, p := range s.parts {
		taken := !oldest[p.k].IsZero()
		if !taken && !p.consuming() {
			continue
		}
		ctx, cancel := context.WithTimeout(context.Background(), WriteTimeout)
		info, err := p.cons.Info(ctx)
		cancel()
		if err != nil {
			if taken {
				return nil, fmt.Errorf("ingest: %s: %w", consumerName(s.group, p.k), err)
			}
			continue
		}
		floors[p.k] = info.AckFloor.Stream
		if !taken {
			continue
		}
		pinned := ""
		for _, g := range info.PriorityGroups {
			if g.Group == s.group {
				pinned = g.PinnedClientID
			}
		}
		age := s.in.cfg.Now().Sub(oldest[p.k])
		if mine := p.pinNow(); pinned != mine && pinned != "" && age >= s.cfg.AckWait/2 {
			return nil, fmt.Errorf("%w: %s is pinned to %q, this instance's pin was %q, and the oldest message it holds of it was stored %v ago",
				errPartitionMoved, consumerName(s.group, p.k), pinned, mine, age.Round(time.Millisecond))
		}
	}
	return floors, nil
}
