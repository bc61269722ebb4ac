package ingest

import "sort"

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

// Len returns how many seqs the set holds.
func (s *seqSet) Len() uint64 {
	var n uint64
	for _, r := range s.r {
		n += r[1] - r[0] + 1
	}
	return n
}

// Ranges returns the ranges, for a manifest.
func (s *seqSet) Ranges() [][2]uint64 { return s.r }
