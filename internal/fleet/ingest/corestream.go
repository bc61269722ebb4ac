package ingest

import (
	"fmt"
	"path"
	"time"
)

// handleStream takes one JetStream message in: a message of its
// partition committed or taken already (at or below the floor, or in
// a range, the instance's or, once its partition came to it, the other
// instances') is acknowledged with the next commit and skipped.
func (c *core) handleStream(topic string, payload []byte, ref ackRef, pos streamPos) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closing || c.err != nil || pos.part < 0 || pos.part >= len(c.streams.parts) {
		return // not acknowledged: the server sends it again
	}
	p := &c.streams.parts[pos.part]
	if pos.newPin {
		// Between the pins another instance was sent something. What
		// this one holds can have been among it only once the ack wait
		// has passed since it was pulled: while it is young, the
		// instance goes on (and reads what the others committed);
		// otherwise it stops, and commits none of it.
		if now := c.cfg.Now(); len(p.pend.Ranges()) > 0 && !young(p.oldest, now, c.streams.ackWait) {
			c.fail(fmt.Errorf("%w: %s came back to this instance while it held uncommitted messages of it pulled %v ago (ack wait %v)",
				errPartitionMoved, p.consumer, now.Sub(p.oldest).Round(time.Millisecond), c.streams.ackWait))
			return
		}
		p.runLast = 0
		if err := c.adopt(p); err != nil {
			c.fail(err)
			return
		}
		p.adopted = false // read again at the first redelivery
	}
	if !pos.first && !p.adopted && !p.seen(pos.seq) {
		// A redelivery: the instance that held the partition may have
		// committed it since its record was read.
		if err := c.adopt(p); err != nil {
			c.fail(err)
			return
		}
		p.adopted = true
	}
	if p.seen(pos.seq) {
		c.acks = append(c.acks, ref)
		c.c.Messages++
		c.c.Duplicates++
		c.m.duplicates.Inc()
		return
	}
	p.take(pos)
	c.handleLocked(topic, payload, ref)
}

// adopt reads what every instance's latest manifest says of partition
// p: it came to this instance, from one that may have committed
// messages of it and not had them acknowledged. It also takes in the
// windows the others committed: a car's resend of one of them (a new
// message of the stream) is then skipped too.
func (c *core) adopt(p *partSeqs) error {
	all, err := c.rec.latestOfAll()
	if err != nil {
		return err
	}
	for _, m := range all {
		for _, s := range m.Streams {
			if s.Consumer == p.consumer {
				p.merge(s)
			}
		}
		if m.Owner == c.cfg.ID {
			continue
		}
		for _, w := range m.Committed {
			if c.others == nil {
				c.others = map[string]*committedSet{}
			}
			if c.others[w.Vehicle] == nil {
				c.others[w.Vehicle] = &committedSet{}
			}
			c.others[w.Vehicle].add(w.Epoch, w.Seqs, c.next)
		}
	}
	return nil
}

// streamsCommitted checks, before commit n's manifest, that none of
// the messages it holds can have gone to another instance (verify),
// then records them committed, with their consumers' floors.
func (c *core) streamsCommitted(n uint64) ([]manifestStream, error) {
	oldest := make([]time.Time, len(c.streams.parts))
	for i := range c.streams.parts {
		if p := &c.streams.parts[i]; len(p.pend.Ranges()) > 0 {
			oldest[i] = p.oldest
		}
	}
	floors := make([]uint64, len(oldest))
	if c.verify != nil {
		f, err := c.verify(oldest)
		if err != nil {
			c.takenOver.Store(true)
			c.c.Takeovers++
			c.m.takeovers.Inc()
			return nil, fmt.Errorf("%w: commit %d not recorded: %w", ErrTakenOver, n, err)
		}
		floors = f
	}
	for i := range c.streams.parts {
		c.streams.parts[i].committed(n, floors[i])
	}
	return c.streams.manifest(), nil
}

// commitNow commits what was taken (a partition is being handed over).
func (c *core) commitNow() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.err != nil {
		return c.err
	}
	if err := c.commit(); err != nil {
		c.fail(err)
		return err
	}
	return nil
}

// latestOfAll reads every instance's latest manifest in the lake.
func (r *record) latestOfAll() ([]manifest, error) {
	names, err := r.store.List(ManifestDir)
	if err != nil {
		return nil, fmt.Errorf("ingest: list %s in %s: %w", ManifestDir, r.store, err)
	}
	latest := map[string]uint64{}
	for _, name := range names {
		dir, base := path.Split(name)
		n, isPending, ok := parseRecordName(base)
		owner := path.Base(dir)
		if !ok || isPending || path.Dir(path.Clean(dir)) != ManifestDir {
			continue
		}
		if cur, seen := latest[owner]; !seen || n > cur {
			latest[owner] = n
		}
	}
	var out []manifest
	for owner, n := range latest {
		m, err := newRecord(r.store, owner).readManifest(n)
		if err != nil {
			return nil, err
		}
		out = append(out, m)
	}
	return out, nil
}
