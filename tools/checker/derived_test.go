package main

import (
	"encoding/json"
	"strings"
	"testing"
)

func entry(seq int64, kind, appinfo, from string, conv Conv) Entry {
	return Entry{Seq: seq, Kind: kind, Appinfo: appinfo, From: from, Conv: conv}
}

func TestRecountFollowsReadsClearsRecallsAndDeletes(t *testing.T) {
	alice := Conv{"user", "alice"}
	up := int64(2)
	clearUp := int64(4)
	inbox := []Entry{
		entry(1, "msg", "m1", "alice", alice),
		entry(2, "msg", "m2", "alice", alice),
		{Seq: 3, Kind: "read", Appinfo: "read:me:1", From: "me", Conv: alice, UpToSeq: &up},
		entry(4, "msg", "m3", "alice", alice),
		entry(5, "msg", "m4", "alice", alice),
		{Seq: 6, Kind: "recall", Appinfo: "recall:alice:m4", From: "alice", Conv: alice, Recall: &RecallRef{Appinfo: "m4"}},
		entry(7, "msg", "m5", "alice", alice),
		{Seq: 8, Kind: "delete", Appinfo: "delete:me:1", From: "me", Conv: Conv{"user", "me"}, Seqs: []int64{7}},
		{Seq: 9, Kind: "clear", Appinfo: "clear:me:1", From: "me", Conv: alice, UpToSeq: &clearUp},
		{Seq: 10, Kind: "msg", Appinfo: "m6", From: "alice", Conv: alice, Mentions: []string{"me"}},
	}
	c := Recount(inbox, "me", 10)["user:alice"]
	// m1, m2 read; m3 cleared; m4 recalled; m5 deleted; m6 unread and a mention.
	if c.Unread != 1 || c.Mentions != 1 || c.ReadSeq != 2 || c.ClearedSeq != 4 || c.LastMsgSeq != 10 || c.LastSeq != 10 {
		t.Fatalf("%+v", *c)
	}
	c = Recount(inbox, "me", 5)["user:alice"]
	if c.Unread != 2 || c.LastMsgSeq != 5 {
		t.Fatalf("at 5: %+v", *c)
	}
}

func notifyHistory(badge int, notified []int64, kills ...float64) *History {
	alice := Conv{"user", "alice"}
	h := &History{
		Meta:       Record{Offline: []string{"carol"}, NotifyWindowMs: 300, Hooks: true},
		Finals:     map[string][]Entry{"carol": {entry(1, "msg", "a1", "alice", alice), entry(2, "msg", "a2", "alice", alice)}},
		FinalCalls: map[string][2]float64{"carol": {5000, 5010}},
	}
	var entries []map[string]interface{}
	for _, s := range notified {
		entries = append(entries, map[string]interface{}{"seq": s, "from": "alice", "appinfo": "a"})
	}
	body, _ := json.Marshal(map[string]interface{}{"user": "carol", "badge": badge, "entries": entries})
	h.Hooks = append(h.Hooks, Record{T: "hook", Kind: "notify", At: 2000, Status: 200, Signed: true, Body: body})
	for i, s := range []string{"a1", "a2"} {
		ret := float64(1010 + i*100)
		args, _ := json.Marshal(map[string]interface{}{"appinfo": s, "to": map[string]string{"user": "carol"}})
		res, _ := json.Marshal(map[string]interface{}{"ok": true, "seq": i + 1})
		h.Ops = append(h.Ops, Record{T: "op", Op: "send", User: "alice", Dev: "alice/d0", Call: 1000 + float64(i*100), Ret: &ret, Args: args, Res: res})
	}
	for _, k := range kills {
		h.Faults = append(h.Faults, Record{T: "fault", Kind: "kill9", Target: "server", At: k})
	}
	return h
}

func TestNotificationsCoverEveryMessageWithTheRecountedBadge(t *testing.T) {
	stats, out := checkNotify(notifyHistory(2, []int64{1, 2}), nil)
	if len(out) != 0 || stats.Notifying != 2 || stats.BadgeChecked != 1 {
		t.Fatalf("%+v %+v", stats, out)
	}
	_, out = checkNotify(notifyHistory(3, []int64{1, 2}), nil)
	if len(out) != 1 || out[0].Kind != "notify-badge" {
		t.Fatalf("a wrong badge passed: %+v", out)
	}
	// A badge flagged badgeCapped is a lower bound of the recount.
	capped := func(badge int) *History {
		h := notifyHistory(badge, []int64{1, 2})
		h.Hooks[0].Body = []byte(strings.Replace(string(h.Hooks[0].Body), `"badge":`, `"badgeCapped":true,"badge":`, 1))
		return h
	}
	if _, out = checkNotify(capped(1), nil); len(out) != 0 {
		t.Fatalf("a capped badge below the recount failed: %+v", out)
	}
	if _, out = checkNotify(capped(3), nil); len(out) != 1 || out[0].Kind != "notify-badge" {
		t.Fatalf("a capped badge above the recount passed: %+v", out)
	}
	_, out = checkNotify(notifyHistory(1, []int64{1}), nil)
	if len(out) != 1 || out[0].Kind != "notify-missing" {
		t.Fatalf("a message never notified passed: %+v", out)
	}
	// A kill -9 of the inbox owner while the window was open: lost by design, counted apart.
	stats, out = checkNotify(notifyHistory(1, []int64{1}, 1150), nil)
	if len(out) != 0 || stats.CrashLost != 1 {
		t.Fatalf("crash-lost notification: %+v %+v", stats, out)
	}
	// A kill long after the window: no excuse.
	_, out = checkNotify(notifyHistory(1, []int64{1}, 9000), nil)
	if len(out) != 1 {
		t.Fatalf("a kill outside the window excused a missing notification: %+v", out)
	}
}

func TestStreamSideCountsOthersMessagesAboveTheCursor(t *testing.T) {
	g := Conv{"group", "g"}
	stream := []Entry{
		{Seq: 1, Gseq: 1, Kind: "msg", Appinfo: "x", From: "bob", Conv: g},
		{Seq: 2, Gseq: 2, Kind: "msg", Appinfo: "y", From: "me", Conv: g},
		{Seq: 3, Gseq: 3, Kind: "msg", Appinfo: "z", From: "bob", Conv: g, Mentions: []string{"@all"}},
		{Seq: 4, Gseq: 4, Kind: "msg", Appinfo: "w", From: "bob", Conv: g, Mentions: []string{"me"}},
		{Seq: 5, Gseq: 5, Kind: "msg", Appinfo: "v", From: "bob", Conv: g},
		{Seq: 6, Gseq: 6, Kind: "recall", Appinfo: "recall:bob:v", From: "bob", Conv: g, Recall: &RecallRef{Appinfo: "v"}},
	}
	if u, m := StreamSide(stream, "me", 0, 6); u != 2 || m != 1 {
		t.Fatalf("unread %d mentions %d", u, m)
	}
	if u, _ := StreamSide(stream, "me", 1, 6); u != 1 {
		t.Fatalf("cursor: unread %d", u)
	}
	// The recall at gseq 6 is past a head of 5: v still counts there.
	if u, _ := StreamSide(stream, "me", 0, 5); u != 3 {
		t.Fatalf("head: unread %d", u)
	}
}

// windowedHistory: n messages from alice to offline carol, and one notification per listed
// window, its badge the unread count at its last listed seq.
func windowedHistory(n int, windows [][]int64) *History {
	alice := Conv{"user", "alice"}
	h := &History{
		Meta:       Record{Offline: []string{"carol"}, NotifyWindowMs: 300, Hooks: true},
		Finals:     map[string][]Entry{},
		FinalCalls: map[string][2]float64{"carol": {90000, 90010}},
	}
	for i := 1; i <= n; i++ {
		app := "a" + string(rune('0'+i/100)) + string(rune('0'+i/10%10)) + string(rune('0'+i%10))
		h.Finals["carol"] = append(h.Finals["carol"], entry(int64(i), "msg", app, "alice", alice))
		ret := float64(1000 + i*10 + 5)
		args, _ := json.Marshal(map[string]interface{}{"appinfo": app, "to": map[string]string{"user": "carol"}})
		res, _ := json.Marshal(map[string]interface{}{"ok": true, "seq": i})
		h.Ops = append(h.Ops, Record{T: "op", Op: "send", User: "alice", Dev: "alice/d0", Call: float64(1000 + i*10), Ret: &ret, Args: args, Res: res})
	}
	for w, seqs := range windows {
		var entries []map[string]interface{}
		for _, s := range seqs {
			entries = append(entries, map[string]interface{}{"seq": s, "from": "alice", "appinfo": "a"})
		}
		badge := int(seqs[len(seqs)-1])
		body, _ := json.Marshal(map[string]interface{}{"user": "carol", "badge": badge, "entries": entries})
		h.Hooks = append(h.Hooks, Record{T: "hook", Kind: "notify", At: float64(60000 + w*1000), Status: 200, Signed: true, Body: body})
	}
	return h
}

func seqsFrom(lo, hi int64) []int64 {
	var out []int64
	for s := lo; s <= hi; s++ {
		out = append(out, s)
	}
	return out
}

func TestEntriesPastAFullWindowAreCountedApartNotExcusedElsewhere(t *testing.T) {
	// A window listed its 100 (1–100); 101 and 102 joined it and are only in its badge.
	stats, out := checkNotify(windowedHistory(103, [][]int64{seqsFrom(1, 100), {103}}), nil)
	if len(out) != 0 || stats.PastWindowBound != 2 {
		t.Fatalf("entries past a full window: %+v %+v", stats, out)
	}
	// A window of 99 is not full: what it left out is missing.
	_, out = checkNotify(windowedHistory(103, [][]int64{seqsFrom(1, 99), {103}}), nil)
	if len(out) != 3 {
		t.Fatalf("a window below the bound excused entries: %+v", out)
	}
	// Past the next window's first entry, a full window excuses nothing.
	_, out = checkNotify(windowedHistory(104, [][]int64{seqsFrom(1, 100), {103}}), nil)
	if len(out) != 1 || out[0].Detail != "offline user never notified of alice/a104 at 104" {
		t.Fatalf("an entry after the next window was excused: %+v", out)
	}
}
