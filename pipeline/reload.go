package pipeline

import (
	"fmt"

	"github.com/yukart/candec/dbc"
)

// PolicyChanges says what SetPolicies changed.
type PolicyChanges struct {
	// Changed counts the signals whose resolved policy changed.
	Changed int
	// Published and Unpublished count those of them that are now
	// published and were not, or the other way round.
	Published, Unpublished int
}

// SetPolicies replaces the policy of every signal with its policy in p
// (nil: DefaultPolicy), at the Engine's current time, without a restart:
// what subscribers see goes on in the same epoch, and on every topic seq
// goes on with no gap and no repeat. Call it on the goroutine that calls
// Frame and Advance. A signal whose resolved policy is the same is not
// touched. For a signal whose policy changed:
//
//   - The new cap, deadbands and heartbeat apply from now: the open cap
//     window, opened by the signal's last publish, closes at that publish
//     plus the new period; the next value is compared with the new
//     deadbands; the heartbeat is timed from the last publish with the
//     new period.
//   - A value the cap holds back stays held: it goes out at its deadline
//     under the new policy (the new window's end, or its grace deadline),
//     or is superseded by a fresher value, as under any cap. It is never
//     lost.
//   - A deadline the new policy puts at or before now (a trailing value
//     of a faster cap, a shorter heartbeat, a shorter stale_after) fires
//     at once, at now. A deadline it moves later, or removes, no longer
//     fires.
//   - A signal no longer published first publishes a value its cap holds
//     (KindFlush), then publishes nothing more: its retained message keeps
//     the last value it published, which Republish no longer repeats.
//   - A signal newly published starts as at New: its first value goes
//     out at once, with seq one more than the last seq of its topic in
//     this Engine's life (1 if it was never published), so that a loss
//     tracker sees no gap.
//
// SetPolicies fails, and changes nothing, when p gives two published
// signals one topic or a signal the window stream's topic (ErrTopic).
// Stats are not reset.
func (e *Engine) SetPolicies(p *PolicyFile) (PolicyChanges, error) {
	if p == nil {
		p = DefaultPolicy()
	}
	pols := make([]Policy, len(e.sigs))
	owner := make(map[string]*dbc.Signal, len(e.sigs))
	var clashes topicClashes
	for i := range e.sigs {
		s := &e.sigs[i]
		pols[i] = p.Resolve(s.sig)
		if !pols[i].Publish || s.clash {
			continue
		}
		if prev, ok := owner[s.topic]; ok {
			clashes.add(s.topic, prev, s.sig)
			continue
		}
		owner[s.topic] = s.sig
	}
	if len(clashes.topics) > 0 {
		return PolicyChanges{}, clashes.err(e.cfg.TopicTemplate)
	}
	if e.win != nil {
		if _, ok := owner[e.winTopic]; ok {
			return PolicyChanges{}, fmt.Errorf("%w: window topic %q is also a signal topic", ErrTopic, e.winTopic)
		}
	}
	e.cfg.Policies = p
	if e.sources != nil {
		e.setOwners(owner)
	}
	var ch PolicyChanges
	for i := range e.sigs {
		s := &e.sigs[i]
		if pols[i] == s.pol {
			continue
		}
		if i < len(e.db.Signals) {
			// Counted per signal: the states of its sources follow.
			ch.Changed++
			switch {
			case s.pol.Publish && !pols[i].Publish:
				ch.Unpublished++
			case !s.pol.Publish && pols[i].Publish:
				ch.Published++
			}
		}
		was := s.publish
		if was && !pols[i].Publish && s.pending {
			// The rule of every cap: the final value is never lost.
			e.publish(s, KindFlush, e.now)
		}
		s.pol = pols[i]
		s.setPolicy()
		if !was && s.publish {
			// What it had before it was unpublished is old: start over,
			// keeping only seq.
			s.hasLast, s.hasPub, s.pending, s.stale = false, false, false, false
		}
		if s.publish {
			e.due(s)
		}
	}
	if ch.Changed > 0 {
		e.restale()
	}
	return ch, nil
}

// due publishes what a new policy makes due for s at or before now, at
// now, and files its next deadline.
func (e *Engine) due(s *sigState) {
	now := e.now
	if s.pending && s.trailAt() <= now {
		e.publish(s, KindTrailing, now)
	}
	if s.heartbeat > 0 && s.hasPub && !s.stale && s.lastPubAt+s.heartbeat <= now {
		e.publish(s, KindHeartbeat, now)
	}
	e.schedule(s)
}

// restale rebuilds each message's list of published signals with a
// stale_after, marks at now those a shorter stale_after has made due,
// and arms each message's staleness timer no later than its deadline.
// A deadline that moved later is left for fireBefore to find, as ever.
func (e *Engine) restale() {
	for m := range e.msgs {
		ms := &e.msgs[m]
		ms.sigs, ms.minStale = ms.sigs[:0], 0
	}
	for i := range e.sigs {
		s := &e.sigs[i]
		if !s.publish || s.staleAfter == 0 {
			continue
		}
		ms := &e.msgs[s.msg]
		ms.sigs = append(ms.sigs, int32(i))
		if ms.minStale == 0 || s.staleAfter < ms.minStale {
			ms.minStale = s.staleAfter
		}
	}
	for m := range e.msgs {
		ms := &e.msgs[m]
		d := e.staleDeadline(ms)
		if d <= e.now {
			e.fireStale(ms, e.now)
			d = e.staleDeadline(ms)
		}
		if d != never {
			e.arm(ms.tid, d)
		}
	}
}
