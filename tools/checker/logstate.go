package main

// The state of the append-only log model: the entries known so far (by seq, and by dedup key),
// the seqs hidden by deletes and clears, and the seq ranges reads have covered. Porcupine keeps
// one state per step it explores, so the state is persistent: a step copies a few pointers and
// the one chunk it changes, never the whole log.

import (
	"hash/fnv"
	"sort"
	"strings"
)

const chunkMax = 32
const keyBuckets = 64

// rec is a known entry. key is exact, or a prefix when prefix is set (an own control entry whose
// server-made id the client never learns: `read:<me>:`, `delete:<me>:`, `clear:<me>:`).
type rec struct {
	seq    int64
	key    string
	prefix bool
	// activity: -1 unknown, 0 no, 1 yes (a message or a group notice); conv when known.
	activity int8
	conv     string
	// seen: a read returned it. Only entries some read has shown must be shown again by later
	// reads; that an acknowledged entry is visible to a read begun after the acknowledgement is
	// checked directly (direct.go, invisibleAcks), which keeps porcupine from having to place
	// every read before the appends it did not see (an exponential search with long reads).
	seen bool
}

type chunk struct{ recs []rec }

type keyBucket struct {
	keys []string
	seqs []int64
}

type interval struct{ lo, hi int64 } // (lo, hi]

type logState struct {
	chunks  []*chunk
	keys    *[keyBuckets]*keyBucket
	count   int
	maxSeq  int64
	deleted []int64          // sorted
	cleared map[string]int64 // conv → cleared up to; copied on write
	covered []interval       // disjoint, sorted
	hash    uint64
}

func newLogState() *logState {
	return &logState{keys: &[keyBuckets]*keyBucket{}, cleared: map[string]int64{}}
}

func hashString(s string) uint64 {
	h := fnv.New64a()
	_, _ = h.Write([]byte(s))
	return h.Sum64()
}

func recHash(r rec) uint64 {
	return hashString(r.key) ^ (uint64(r.seq) * 0x9E3779B97F4A7C15)
}

func (s *logState) clone() *logState {
	c := *s
	return &c
}

// find returns the chunk index and position of seq, and whether it is there.
func (s *logState) find(seq int64) (int, int, bool) {
	ci := sort.Search(len(s.chunks), func(i int) bool {
		recs := s.chunks[i].recs
		return recs[len(recs)-1].seq >= seq
	})
	if ci == len(s.chunks) {
		return ci, 0, false
	}
	recs := s.chunks[ci].recs
	pos := sort.Search(len(recs), func(i int) bool { return recs[i].seq >= seq })
	return ci, pos, pos < len(recs) && recs[pos].seq == seq
}

func (s *logState) get(seq int64) (rec, bool) {
	ci, pos, ok := s.find(seq)
	if !ok {
		return rec{}, false
	}
	return s.chunks[ci].recs[pos], true
}

// seqOfKey: the seq an exact key is known at.
func (s *logState) seqOfKey(key string) (int64, bool) {
	b := s.keys[hashString(key)%keyBuckets]
	if b == nil {
		return 0, false
	}
	for i, k := range b.keys {
		if k == key {
			return b.seqs[i], true
		}
	}
	return 0, false
}

func (s *logState) indexKey(key string, seq int64) {
	idx := hashString(key) % keyBuckets
	keys := *s.keys
	old := keys[idx]
	nb := &keyBucket{}
	if old != nil {
		nb.keys = append(append([]string{}, old.keys...), key)
		nb.seqs = append(append([]int64{}, old.seqs...), seq)
	} else {
		nb.keys = []string{key}
		nb.seqs = []int64{seq}
	}
	keys[idx] = nb
	s.keys = &keys
}

// put inserts or replaces the record at r.seq (s must be a fresh clone).
func (s *logState) put(r rec) {
	ci, pos, found := s.find(r.seq)
	chunks := append([]*chunk{}, s.chunks...)
	if found {
		old := chunks[ci].recs[pos]
		s.hash ^= recHash(old)
		recs := append([]rec{}, chunks[ci].recs...)
		recs[pos] = r
		chunks[ci] = &chunk{recs}
	} else {
		s.count++
		if r.seq > s.maxSeq {
			s.maxSeq = r.seq
		}
		if ci == len(chunks) {
			if ci > 0 && len(chunks[ci-1].recs) < chunkMax {
				chunks[ci-1] = &chunk{append(append([]rec{}, chunks[ci-1].recs...), r)}
			} else {
				chunks = append(chunks, &chunk{[]rec{r}})
			}
		} else {
			old := chunks[ci].recs
			recs := make([]rec, 0, len(old)+1)
			recs = append(recs, old[:pos]...)
			recs = append(recs, r)
			recs = append(recs, old[pos:]...)
			if len(recs) > chunkMax {
				half := len(recs) / 2
				chunks = append(chunks[:ci], append([]*chunk{{recs[:half:half]}, {recs[half:]}}, chunks[ci+1:]...)...)
			} else {
				chunks[ci] = &chunk{recs}
			}
		}
	}
	s.chunks = chunks
	s.hash ^= recHash(r)
	if !r.prefix {
		if _, ok := s.seqOfKey(r.key); !ok {
			s.indexKey(r.key, r.seq)
		}
	}
}

// each calls f for every known entry with lo < seq <= hi, ascending; f returning false stops.
func (s *logState) each(lo, hi int64, f func(rec) bool) {
	ci, pos, _ := s.find(lo + 1)
	for ; ci < len(s.chunks); ci++ {
		recs := s.chunks[ci].recs
		for ; pos < len(recs); pos++ {
			if recs[pos].seq > hi {
				return
			}
			if !f(recs[pos]) {
				return
			}
		}
		pos = 0
	}
}

func (s *logState) fullHash() uint64 {
	h := s.hash
	for _, iv := range s.covered {
		h ^= uint64(iv.lo)*0x9E3779B97F4A7C15 + uint64(iv.hi)*0xBF58476D1CE4E5B9
	}
	return h
}

func (s *logState) equal(o *logState) bool {
	if s == o {
		return true
	}
	if s.hash != o.hash || s.count != o.count || s.maxSeq != o.maxSeq || len(s.deleted) != len(o.deleted) ||
		len(s.cleared) != len(o.cleared) || len(s.covered) != len(o.covered) {
		return false
	}
	for i := range s.deleted {
		if s.deleted[i] != o.deleted[i] {
			return false
		}
	}
	for k, v := range s.cleared {
		if o.cleared[k] != v {
			return false
		}
	}
	for i := range s.covered {
		if s.covered[i] != o.covered[i] {
			return false
		}
	}
	var a, b []rec
	for _, c := range s.chunks {
		a = append(a, c.recs...)
	}
	for _, c := range o.chunks {
		b = append(b, c.recs...)
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// keyMatches: a known record answers for a revealed key (exactly, or by its prefix).
func (r rec) keyMatches(key string) bool {
	if r.prefix {
		return strings.HasPrefix(key, r.key)
	}
	return r.key == key
}
