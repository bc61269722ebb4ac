package ingest

import (
	"hash/fnv"
	"slices"
	"strconv"
	"sync"
	"time"
)

// presenceBeats is how many beats an instance may miss before the
// others take it for gone and share its partitions out.
const presenceBeats = 3

// presence is what an instance knows of its group's live instances:
// each announces its id every beat on the group's subject
// (PresenceSubject), and hears the others'.
type presence struct {
	me   string
	beat time.Duration
	mu   sync.Mutex
	seen map[string]time.Time // id → last heard
}

// PresenceSubject is the core NATS subject on which the instances of
// group announce themselves.
func PresenceSubject(group string) string { return "candec.ingest." + group + ".alive" }

func newPresence(me string, beat time.Duration) *presence {
	return &presence{me: me, beat: beat, seen: map[string]time.Time{}}
}

// heard records id's announcement at now. An id is a Config.ID (checked
// by Validate on its instance); a payload that is none is ignored.
func (p *presence) heard(id string, now time.Time) {
	if id == "" || len(id) > 100 {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if _, ok := p.seen[id]; !ok && len(p.seen) >= maxPeers {
		return
	}
	p.seen[id] = now
}

// maxPeers bounds the ids remembered: an instance of the group is an
// ingest core, a few dozen for the largest fleet.
const maxPeers = 1024

// live returns the ids heard within presenceBeats beats of now, and
// the instance's own, sorted; it forgets the others.
func (p *presence) live(now time.Time) []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	ids := []string{p.me}
	for id, t := range p.seen {
		switch {
		case now.Sub(t) > presenceBeats*p.beat:
			delete(p.seen, id)
		case id != p.me:
			ids = append(ids, id)
		}
	}
	slices.Sort(ids)
	return ids
}

// owner returns which of ids takes partition k: the highest of a hash
// of each id and k (rendezvous hashing), so that an instance that comes
// or goes moves only its own share of the partitions.
func owner(ids []string, k int) string {
	var best string
	var top uint64
	for _, id := range ids {
		h := fnv.New64a()
		h.Write([]byte(id))
		h.Write([]byte{0})
		h.Write(strconv.AppendInt(nil, int64(k), 10))
		if s := mix(h.Sum64()); best == "" || s > top {
			best, top = id, s
		}
	}
	return best
}

// mix spreads FNV's bits (splitmix64's finaliser): FNV of strings
// that differ only at their end differ little in their high bits.
func mix(x uint64) uint64 {
	x ^= x >> 30
	x *= 0xbf58476d1ce4e5b9
	x ^= x >> 27
	x *= 0x94d049bb133111eb
	return x ^ x>>31
}
