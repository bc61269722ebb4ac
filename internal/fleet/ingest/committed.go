package ingest

import (
	"cmp"
	"slices"
)

// What an instance remembers of a vehicle's committed windows is
// bounded, whatever the vehicle sends (a car chooses its epochs and
// seqs).
const (
	// maxEpochRanges bounds the ranges of seqs kept per epoch: past it
	// the lowest gap is taken as closed. An instance alone sees a gap
	// only where windows were lost (they never come); in a group each
	// sees the others' share as gaps, and a window of another's share
	// that came late (a car's resend, delivered to another member) is
	// then skipped, as the member that had it wrote it.
	maxEpochRanges = 16
	// maxEpochs bounds the epochs kept per vehicle: past it, the epoch
	// added to longest ago is forgotten. An epoch is a run of the car's
	// decoder (its start time); a window of a forgotten epoch is taken
	// as new. The car's clock may go back (a board without a clock), so
	// no epoch is taken as old for its value.
	maxEpochs = 16
)

// epochSeqs is the committed windows of one epoch of a vehicle.
type epochSeqs struct {
	epoch uint64
	seqs  seqSet
	last  uint64 // the commit that last added to it
}

// committedSet is a vehicle's committed windows, per epoch: a few
// ranges each (one for a car whose windows all came here).
type committedSet struct {
	epochs []epochSeqs // in no order; a few
}

// has reports whether window (epoch, seq) was committed; a nil set
// has none.
func (c *committedSet) has(epoch, seq uint64) bool {
	if c == nil {
		return false
	}
	for i := range c.epochs {
		if c.epochs[i].epoch == epoch {
			return c.epochs[i].seqs.Has(seq)
		}
	}
	return false
}

// add adds the ranges of epoch, committed by commit n, and keeps the
// set within its bounds.
func (c *committedSet) add(epoch uint64, ranges [][2]uint64, n uint64) {
	i := slices.IndexFunc(c.epochs, func(e epochSeqs) bool { return e.epoch == epoch })
	if i < 0 {
		if len(c.epochs) >= maxEpochs {
			oldest := 0
			for k := range c.epochs {
				if c.epochs[k].last < c.epochs[oldest].last {
					oldest = k
				}
			}
			c.epochs = slices.Delete(c.epochs, oldest, oldest+1)
		}
		c.epochs = append(c.epochs, epochSeqs{epoch: epoch})
		i = len(c.epochs) - 1
	}
	e := &c.epochs[i]
	for _, r := range ranges {
		if r[0] <= r[1] {
			e.seqs.AddRange(r[0], r[1])
		}
	}
	e.seqs.Bound(maxEpochRanges)
	e.last = max(e.last, n)
}

// windows lists the set for a manifest, by epoch.
func (c *committedSet) windows(vehicle string) []manifestWindow {
	out := make([]manifestWindow, 0, len(c.epochs))
	for _, e := range c.epochs {
		out = append(out, manifestWindow{Vehicle: vehicle, Epoch: e.epoch, Seqs: e.seqs.Ranges(), Commit: e.last})
	}
	slices.SortFunc(out, func(a, b manifestWindow) int { return cmp.Compare(a.Epoch, b.Epoch) })
	return out
}
