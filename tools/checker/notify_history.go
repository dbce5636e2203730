package main

// What the history says around a notification window: when a seq was first seen, the head a
// later sync saw, whether a rollback or a crash fell inside the window, and the seqs full
// notifications cover.

import (
	"math"
	"sort"
	"strings"
)

// firstSeen: when a sync of the user's inbox (the offline poller's HTTP syncs) first returned each seq.
func firstSeen(h *History, user string) map[int64]float64 {
	out := map[int64]float64{}
	for i := range h.Ops {
		op := &h.Ops[i]
		if op.User != user || op.Op != "sync" || !op.ok() {
			continue
		}
		res, _ := decode[syncRes](op.Res)
		for _, e := range res.Entries {
			if t, ok := out[e.Seq]; !ok || *op.Ret < t {
				out[e.Seq] = *op.Ret
			}
		}
	}
	return out
}

// headSeenAfter: the highest seq the first complete sync (all pages) begun after `at` showed;
// every entry appended before `at` is at or below it. -1 when no sync began after `at`.
func headSeenAfter(h *History, user string, at float64) int64 {
	best := int64(-1)
	bestCall := 0.0
	for i := range h.Ops {
		op := &h.Ops[i]
		if op.User != user || op.Op != "sync" || !op.ok() || op.Call < at {
			continue
		}
		res, _ := decode[syncRes](op.Res)
		if res.HasMore {
			continue
		}
		if best < 0 || op.Call < bestCall {
			bestCall = op.Call
			best = res.HeadSeq
			if n := len(res.Entries); n > 0 && res.Entries[n-1].Seq > best {
				best = res.Entries[n-1].Seq
			}
		}
	}
	return best
}

// rolledBack: a notification job published within [from, to] may have been taken by a JetStream
// rollback — accepted after the store's copy was taken and before the rollback stopped the server
// (what it had pending is thrown away with that store). A job delivered before the rollback
// escapes it; a missing notification was not delivered.
func rolledBack(h *History, from, to float64) bool {
	snapshot := firstSnapshot(h)
	if snapshot < 0 || to < snapshot {
		return false
	}
	for _, f := range h.Faults {
		if f.Kind == "nats-rollback" && from <= rollbackStopped(f) {
			return true
		}
	}
	return false
}

// crashed: a process that could own the user's inbox died (kill -9) within [from, to].
func crashed(h *History, user string, from, to float64) bool {
	shard, known := h.Meta.UserShards[user]
	for _, f := range h.Faults {
		crash := strings.HasPrefix(f.Kind, "kill9") || f.Kind == "outage30"
		if !crash || f.Kind == "kill9-gateway" || f.At < from || f.At > to {
			continue // a gateway holds no notification window
		}
		if f.Target == "server" || !known || len(f.Shards) == 0 {
			return true
		}
		for _, s := range f.Shards {
			if s == shard {
				return true
			}
		}
	}
	return false
}

// seqRange: the seqs strictly between lo and hi.
type seqRange struct{ lo, hi int64 }

type seqRanges []seqRange

func (rs seqRanges) holds(seq int64) bool {
	for _, r := range rs {
		if seq > r.lo && seq < r.hi {
			return true
		}
	}
	return false
}

// fullWindows: where the entries a full notification could not list lie. A window's entries are
// listed in inbox order, so those past the bound come after its last listed seq and before the
// first seq of the user's next window.
func fullWindows(bodies []notifyBody) seqRanges {
	firsts := make([]int64, 0, len(bodies))
	for _, b := range bodies {
		if len(b.Entries) > 0 {
			firsts = append(firsts, b.Entries[0].Seq)
		}
	}
	sort.Slice(firsts, func(i, j int) bool { return firsts[i] < firsts[j] })
	var out seqRanges
	for _, b := range bodies {
		if len(b.Entries) < NotifyMaxItems {
			continue
		}
		last := b.Entries[len(b.Entries)-1].Seq
		next := int64(math.MaxInt64)
		if i := sort.Search(len(firsts), func(i int) bool { return firsts[i] > last }); i < len(firsts) {
			next = firsts[i]
		}
		out = append(out, seqRange{last, next})
	}
	return out
}
