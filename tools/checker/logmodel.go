package main

// The model every inbox and every group stream is checked against: an append-only log of
// entries numbered by seq, written by the owner's own acknowledged ops and by writers the
// client never sees (other senders' copies, receipts, group notices). Porcupine looks for an
// order of the operations, each at some instant between its call and its return, in which
// every step below holds; if there is none, the history is not linearizable.
//
//   append (an op acknowledged with a seq in this log; key = its dedup key)
//     - the key is known already: the seq must be the one it is known at (I3: one copy; a
//       resend is answered with the original seq);
//     - the seq is known with another key: reused (I1);
//     - a fresh append (a send answered duplicate:false, a read, a delete, a clear) lands
//       above every seq known so far (I1: seqs strictly increase in append order);
//     - it may not land inside a range a read already covered (I2).
//   read (sync, group.history by afterGseq: entries above maxSeq, ascending)
//     - strictly increasing, all above maxSeq (I1);
//     - every entry an earlier read returned that lies in (maxSeq, last returned] — all above
//       maxSeq when hasMore is false — is returned unless a delete or clear hides it (I2: no
//       skipped entry; that an acknowledged entry is visible to a read begun after the
//       acknowledgement is a direct check, direct.go);
//     - an entry it reveals for the first time may not lie in a range an earlier read covered
//       (I2), nor carry a key known at another seq (I3), nor be hidden (delete, clear);
//     - the final read of a round holds every acknowledged message this log must hold (I4).
//   hide (a delete or clear whose answer never came): it happened, or it did not.

import (
	"fmt"
	"strings"

	"github.com/anishathalye/porcupine"
)

type inputKind int

const (
	inAppend inputKind = iota
	inRead
	inHide
)

type logInput struct {
	kind inputKind
	desc string
	// append
	rec   rec
	fresh bool
	// append and hide: what a delete or clear hides
	hideSeqs  []int64
	clearConv string
	clearUpTo int64
	// read
	maxSeq  int64
	entries []rec
	hasMore bool
	// raw: the final read of the stored log, hidden entries included
	raw bool
	// excused: seqs a raw final read may reveal inside a covered range (hidden in the final view)
	excused     map[int64]bool
	mustContain []string
	// hides carried by the entries read (delete and clear entries)
	readHides []hideOf
}

type hideOf struct {
	seqs      []int64
	clearConv string
	clearUpTo int64
}

// stepFailure says why a step is impossible; the model itself only needs the boolean.
func stepFailure(s *logState, in *logInput) string {
	switch in.kind {
	case inAppend:
		r := in.rec
		if !r.prefix {
			if seq, ok := s.seqOfKey(r.key); ok {
				if seq != r.seq {
					return fmt.Sprintf("duplicate: %s known at %d, acknowledged at %d", r.key, seq, r.seq)
				}
				return ""
			}
		}
		if old, ok := s.get(r.seq); ok {
			if old.prefix && !r.prefix && strings.HasPrefix(r.key, old.key) {
				return ""
			}
			return fmt.Sprintf("reused: seq %d holds %s, acknowledged for %s", r.seq, old.key, r.key)
		}
		if in.fresh && r.seq <= s.maxSeq {
			return fmt.Sprintf("regression: fresh append %s at %d, not above %d", r.key, r.seq, s.maxSeq)
		}
		if s.inCovered(r.seq) {
			return fmt.Sprintf("skip: %s appended at %d, inside a range a read already covered", r.key, r.seq)
		}
		return ""
	case inRead:
		return readFailure(s, in)
	}
	return ""
}

func readFailure(s *logState, in *logInput) string {
	prev := in.maxSeq
	for _, r := range in.entries {
		if r.seq <= prev {
			return fmt.Sprintf("regression: read from %d returned %d after %d", in.maxSeq, r.seq, prev)
		}
		prev = r.seq
	}
	// What the entries read hide applies to this very read (they were appended before it).
	st := s
	if len(in.readHides) > 0 {
		st = s.clone()
		for _, h := range in.readHides {
			st.hide(h.seqs, h.clearConv, h.clearUpTo)
		}
	}
	returned := make(map[int64]bool, len(in.entries))
	for _, r := range in.entries {
		returned[r.seq] = true
		if old, ok := st.get(r.seq); ok {
			if !old.keyMatches(r.key) {
				return fmt.Sprintf("reused: seq %d known as %s, read as %s", r.seq, old.key, r.key)
			}
		} else {
			if seq, ok := st.seqOfKey(r.key); ok && seq != r.seq {
				return fmt.Sprintf("duplicate: %s known at %d, read again at %d", r.key, seq, r.seq)
			}
			if st.inCovered(r.seq) && !(in.raw && in.excused[r.seq]) {
				return fmt.Sprintf("skip: %s at %d appeared inside a range a read already covered", r.key, r.seq)
			}
		}
		if !in.raw && st.hidden(r) {
			return fmt.Sprintf("hidden returned: %s at %d is deleted or cleared", r.key, r.seq)
		}
	}
	hi := int64(1<<62 - 1)
	if in.hasMore && len(in.entries) > 0 {
		hi = in.entries[len(in.entries)-1].seq
	}
	failure := ""
	st.each(in.maxSeq, hi, func(k rec) bool {
		if returned[k.seq] || (!in.raw && (!k.seen || st.mayBeHidden(k))) {
			return true
		}
		failure = fmt.Sprintf("skip: read from %d left out %s at %d", in.maxSeq, k.key, k.seq)
		return false
	})
	if failure != "" {
		return failure
	}
	if len(in.mustContain) > 0 {
		have := map[string]bool{}
		for _, r := range in.entries {
			have[r.key] = true
		}
		for _, key := range in.mustContain {
			if !have[key] {
				if _, ok := st.seqOfKey(key); !ok {
					return fmt.Sprintf("lost: acknowledged %s is not in the final log", key)
				}
			}
		}
	}
	return ""
}

func applyInput(s *logState, in *logInput) *logState {
	n := s.clone()
	switch in.kind {
	case inAppend:
		if old, ok := n.get(in.rec.seq); !ok || old.prefix {
			n.put(in.rec)
		}
		n.hide(in.hideSeqs, in.clearConv, in.clearUpTo)
	case inRead:
		for _, h := range in.readHides {
			n.hide(h.seqs, h.clearConv, h.clearUpTo)
		}
		for _, r := range in.entries {
			r.seen = true
			old, ok := n.get(r.seq)
			if !ok || (old.prefix && !r.prefix) || !old.seen {
				n.put(r)
			}
		}
		if len(in.entries) > 0 {
			n.cover(in.maxSeq, in.entries[len(in.entries)-1].seq)
		}
	case inHide:
		n.hide(in.hideSeqs, in.clearConv, in.clearUpTo)
	}
	return n
}

// logModel is the porcupine model of one log (one partition per inbox or stream).
var logModel = porcupine.NondeterministicModel{
	Init: func() []interface{} { return []interface{}{newLogState()} },
	Step: func(state, input, output interface{}) []interface{} {
		s := state.(*logState)
		in := input.(*logInput)
		if in.kind == inHide {
			// The answer never came: the delete or clear happened, or it did not.
			return []interface{}{s, applyInput(s, in)}
		}
		if stepFailure(s, in) != "" {
			return nil
		}
		return []interface{}{applyInput(s, in)}
	},
	Equal: func(a, b interface{}) bool { return a.(*logState).equal(b.(*logState)) },
	Hash:  func(s interface{}) uint64 { return s.(*logState).fullHash() },
	DescribeOperation: func(input, output interface{}) string {
		return input.(*logInput).desc
	},
}
