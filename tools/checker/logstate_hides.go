package main

// What reads no longer return (deletes, clears) and the ranges reads have covered.

import "sort"

func (s *logState) isDeleted(seq int64) bool {
	i := sort.Search(len(s.deleted), func(i int) bool { return s.deleted[i] >= seq })
	return i < len(s.deleted) && s.deleted[i] == seq
}

// hidden: what sync no longer returns (deleted, or an activity entry of a cleared conversation).
func (s *logState) hidden(r rec) bool {
	if s.isDeleted(r.seq) {
		return true
	}
	if r.activity == 1 {
		if upTo, ok := s.cleared[r.conv]; ok && r.seq <= upTo {
			return true
		}
	}
	return false
}

// mayBeHidden: hidden, or an entry of unknown kind that a clear could hide.
func (s *logState) mayBeHidden(r rec) bool {
	if s.hidden(r) {
		return true
	}
	if r.activity == -1 {
		for _, upTo := range s.cleared {
			if r.seq <= upTo {
				return true
			}
		}
	}
	return false
}

func (s *logState) hide(seqs []int64, clearConv string, clearUpTo int64) {
	if len(seqs) > 0 {
		set := map[int64]bool{}
		for _, d := range s.deleted {
			set[d] = true
		}
		changed := false
		for _, d := range seqs {
			if !set[d] {
				set[d] = true
				changed = true
				s.hash ^= uint64(d)*0xC2B2AE3D27D4EB4F + 1
			}
		}
		if changed {
			s.deleted = make([]int64, 0, len(set))
			for d := range set {
				s.deleted = append(s.deleted, d)
			}
			sort.Slice(s.deleted, func(i, j int) bool { return s.deleted[i] < s.deleted[j] })
		}
	}
	if clearConv != "" && clearUpTo > s.cleared[clearConv] {
		cleared := make(map[string]int64, len(s.cleared)+1)
		for k, v := range s.cleared {
			cleared[k] = v
		}
		old, had := s.cleared[clearConv]
		if had {
			s.hash ^= hashString(clearConv) * uint64(old+3)
		}
		cleared[clearConv] = clearUpTo
		s.hash ^= hashString(clearConv) * uint64(clearUpTo+3)
		s.cleared = cleared
	}
}

func (s *logState) inCovered(seq int64) bool {
	i := sort.Search(len(s.covered), func(i int) bool { return s.covered[i].hi >= seq })
	return i < len(s.covered) && s.covered[i].lo < seq
}

func (s *logState) cover(lo, hi int64) {
	if hi <= lo {
		return
	}
	out := make([]interval, 0, len(s.covered)+1)
	cur := interval{lo, hi}
	placed := false
	for _, iv := range s.covered {
		switch {
		case iv.hi < cur.lo:
			out = append(out, iv)
		case iv.lo > cur.hi:
			if !placed {
				out = append(out, cur)
				placed = true
			}
			out = append(out, iv)
		default:
			if iv.lo < cur.lo {
				cur.lo = iv.lo
			}
			if iv.hi > cur.hi {
				cur.hi = iv.hi
			}
		}
	}
	if !placed {
		out = append(out, cur)
	}
	s.covered = out
}
