package ingest

import (
	"math"
	"slices"
	"sort"
)

// seqSet is a set of window seqs as sorted, disjoint, non-adjacent
// ranges: a car's stream arrives mostly in order, so a commit's seqs are
// a range or a few. Add and Has cost a binary search; an Add at the end,
// the usual case, extends the last range in place.
type seqSet struct {
	r [][2]uint64 // [lo, hi], inclusive
}

// Add adds seq; it returns false when seq was there already.
func (s *seqSet) Add(seq uint64) bool {
	n := len(s.r)
	if n > 0 && s.r[n-1][1] < seq { // the usual case: after the last range
		if s.r[n-1][1]+1 == seq {
			s.r[n-1][1] = seq
		} else {
			s.r = append(s.r, [2]uint64{seq, seq})
		}
		return true
	}
	i := s.find(seq)
	if i < n && s.r[i][0] <= seq {
		return false
	}
	// seq lies between r[i-1] and r[i] (either may be missing).
	joinLeft := i > 0 && s.r[i-1][1]+1 == seq
	joinRight := i < n && seq+1 == s.r[i][0]
	switch {
	case joinLeft && joinRight:
		s.r[i-1][1] = s.r[i][1]
		s.r = append(s.r[:i], s.r[i+1:]...)
	case joinLeft:
		s.r[i-1][1] = seq
	case joinRight:
		s.r[i][0] = seq
	default:
		s.r = append(s.r, [2]uint64{})
		copy(s.r[i+1:], s.r[i:])
		s.r[i] = [2]uint64{seq, seq}
	}
	return true
}

// Has reports whether seq is in the set.
func (s *seqSet) Has(seq uint64) bool {
	i := s.find(seq)
	return i < len(s.r) && s.r[i][0] <= seq
}

// find returns the index of the first range whose hi is ≥ seq.
func (s *seqSet) find(seq uint64) int {
	return sort.Search(len(s.r), func(i int) bool { return s.r[i][1] >= seq })
}

// Ranges returns the ranges, for a manifest.
func (s *seqSet) Ranges() [][2]uint64 { return s.r }

// AddRange adds every seq from lo to hi (lo <= hi), merging the ranges
// it meets or touches.
func (s *seqSet) AddRange(lo, hi uint64) {
	// The first range that ends at lo-1 or later: the ones before it
	// stay apart.
	i := sort.Search(len(s.r), func(k int) bool { return s.r[k][1] >= lo || lo > 0 && s.r[k][1] == lo-1 })
	j := i
	for j < len(s.r) && (s.r[j][0] <= hi || hi < math.MaxUint64 && s.r[j][0] == hi+1) {
		lo, hi = min(lo, s.r[j][0]), max(hi, s.r[j][1])
		j++
	}
	s.r = slices.Replace(s.r, i, j, [2]uint64{lo, hi})
}

// Bound keeps at most n ranges (n >= 1): while there are more, the gap
// between the lowest two is closed, its seqs taken as in the set.
// It reports how many gaps it closed.
func (s *seqSet) Bound(n int) int {
	k := len(s.r) - n
	if k <= 0 {
		return 0
	}
	s.r[k][0] = s.r[0][0]
	s.r = slices.Delete(s.r, 0, k)
	return k
}
