package main

// Offline notifications: every message from someone else in an offline user's inbox is named by
// a notification (or lost with a crashed window, counted apart), and every badge equals the
// recount of the inbox at the time of the call.

import (
	"fmt"
	"sort"
)

// NotifyMarginMs: how long after a notification window closes its job may still be only in
// memory (closing the window → the durable job), for telling a crash-lost notification
// (documented: docs/faults.md) from a missing one.
const NotifyMarginMs = 1000

// VisibilitySlackMs: how long after the owner appended an entry (and counted it in the index a
// badge is read from) a sync through a gateway may still not return it. Distributed runs showed
// up to 0.2 s (docs/faults.md); a badge is held against the inbox as a sync begun this long after
// the call saw it.
const VisibilitySlackMs = 1000

// NotifyMaxItems: the most entries one notification lists (protocol.md, "Offline
// notifications"); the window's further entries are counted in its badge, not listed.
const NotifyMaxItems = 100

type notifyBody struct {
	User  string `json:"user"`
	Badge int    `json:"badge"`
	// BadgeCapped: a huge group's stream count stopped at its bound, the badge is a lower bound
	// (protocol.md, "Offline notifications").
	BadgeCapped bool `json:"badgeCapped"`
	Entries     []struct {
		Seq     int64  `json:"seq"`
		From    string `json:"from"`
		Appinfo string `json:"appinfo"`
	} `json:"entries"`
}

// NotifyStats counts what the offline-notification check saw.
type NotifyStats struct {
	Calls     int `json:"calls"`
	Notifying int `json:"notifying"`
	CrashLost int `json:"crashLost"`
	// RollbackLost: never notified, its job published while a JetStream rollback could take it.
	RollbackLost int `json:"rollbackLost"`
	// PastWindowBound: never listed, in a window that already listed NotifyMaxItems entries.
	PastWindowBound int `json:"pastWindowBound"`
	BadgeChecked    int `json:"badgeChecked"`
}

func checkNotify(h *History, acks []Ack) (stats NotifyStats, out []Anomaly) {
	window := h.Meta.NotifyWindowMs
	// The earliest a message can have been appended: the call of the attempt that stored it
	// (answered duplicate:false), else the first attempt.
	firstCall := map[string]float64{}
	stored := map[string]bool{}
	for i := range h.Ops {
		op := &h.Ops[i]
		if op.Op != "send" {
			continue
		}
		a, _ := decode[sendArgs](op.Args)
		k := messageKey(op.User, a.Appinfo)
		if stored[k] {
			continue
		}
		if res, ok := decode[sendRes](op.Res); ok && op.ok() && !res.Duplicate {
			firstCall[k] = op.Call
			stored[k] = true
			continue
		}
		if t, ok := firstCall[k]; !ok || op.Call < t {
			firstCall[k] = op.Call
		}
	}
	for _, user := range h.Meta.Offline {
		final, ok := h.Finals[user]
		if !ok {
			continue
		}
		type call struct {
			at   float64
			body notifyBody
		}
		var calls []call
		notified := map[int64]bool{}
		for i := range h.Hooks {
			hk := &h.Hooks[i]
			if hk.Kind != "notify" || hk.Status < 200 || hk.Status > 299 {
				continue
			}
			b, _ := decode[notifyBody](hk.Body)
			if b.User != user {
				continue
			}
			stats.Calls++
			calls = append(calls, call{hk.At, b})
			for _, e := range b.Entries {
				notified[e.Seq] = true
			}
		}
		seenAt := firstSeen(h, user)
		bodies := make([]notifyBody, len(calls))
		for i, c := range calls {
			bodies[i] = c.body
		}
		full := fullWindows(bodies)
		for _, e := range final {
			if e.Kind != "msg" || e.From == user {
				continue
			}
			stats.Notifying++
			if notified[e.Seq] {
				continue
			}
			if full.holds(e.Seq) {
				stats.PastWindowBound++
				continue
			}
			from := firstCall[e.DedupKey()]
			until, ok := seenAt[e.Seq]
			if !ok {
				until = h.FinalCalls[user][0]
			}
			if crashed(h, user, from-window, until+window+NotifyMarginMs) {
				stats.CrashLost++
				continue
			}
			if rolledBack(h, from, until+window+NotifyMarginMs) {
				stats.RollbackLost++
				continue
			}
			out = append(out, Anomaly{Kind: "notify-missing", Where: "inbox:" + user, At: until,
				Detail: fmt.Sprintf("offline user never notified of %s at %d", e.DedupKey(), e.Seq)})
		}
		for _, c := range calls {
			lo := int64(0)
			for _, e := range c.body.Entries {
				lo = max64(lo, e.Seq)
			}
			hi := headSeenAfter(h, user, c.at+VisibilitySlackMs)
			if hi < 0 && len(final) > 0 {
				hi = final[len(final)-1].Seq
			}
			badges := map[int]bool{}
			candidates := []int64{lo}
			for _, e := range final {
				if e.Seq > lo && e.Seq <= hi {
					candidates = append(candidates, e.Seq)
				}
			}
			for _, at := range candidates {
				total := 0
				for _, cc := range Recount(final, user, at) {
					total += cc.Unread
				}
				badges[total] = true
			}
			stats.BadgeChecked++
			if !badgeFits(c.body, badges) {
				var allowed []int
				for b := range badges {
					allowed = append(allowed, b)
				}
				sort.Ints(allowed)
				out = append(out, Anomaly{Kind: "notify-badge", Where: "inbox:" + user, At: c.at,
					Detail: fmt.Sprintf("badge %d; the recount between seq %d and %d gives %v", c.body.Badge, lo, hi, allowed)})
			}
		}
	}
	return stats, out
}

// badgeFits: the badge is one of the recounts, or at most one when it is flagged a lower bound.
// The recount is the inbox's: the round's offline users are in no huge group (tools/campaign's
// plan), so no stream side adds to their badge.
func badgeFits(b notifyBody, recounts map[int]bool) bool {
	if !b.BadgeCapped {
		return recounts[b.Badge]
	}
	for r := range recounts {
		if b.Badge <= r {
			return true
		}
	}
	return false
}
