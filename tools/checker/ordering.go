package main

// The order checks of I1 and I2 that need times, not only the final logs: a fresh append lands
// above what was seen before it began, and an acknowledged entry is visible to later syncs.

import (
	"fmt"
	"sort"
)

// freshOrder: a fresh append (send answered duplicate:false, read, delete, clear) lands above
// every seq of the same inbox acknowledged or read before it was called (I1).
func freshOrder(h *History) []Anomaly {
	type ev struct {
		t     float64
		start bool
		seq   int64
		what  string
	}
	per := map[string][]ev{}
	for i := range h.Ops {
		op := &h.Ops[i]
		if !op.ok() {
			continue
		}
		inbox := op.User
		switch op.Op {
		case "send":
			res, _ := decode[sendRes](op.Res)
			a, _ := decode[sendArgs](op.Args)
			if !res.Duplicate {
				per[inbox] = append(per[inbox], ev{op.Call, true, res.Seq, op.Dev + " send " + a.Appinfo})
			}
			per[inbox] = append(per[inbox], ev{*op.Ret, false, res.Seq, ""})
		case "read", "delete", "clear":
			res, _ := decode[seqRes](op.Res)
			per[inbox] = append(per[inbox], ev{op.Call, true, res.Seq, op.Dev + " " + op.Op})
			per[inbox] = append(per[inbox], ev{*op.Ret, false, res.Seq, ""})
		case "sync":
			res, _ := decode[syncRes](op.Res)
			if n := len(res.Entries); n > 0 {
				per[inbox] = append(per[inbox], ev{*op.Ret, false, res.Entries[n-1].Seq, ""})
			}
		}
	}
	for i := range h.Pushes {
		p := &h.Pushes[i]
		if fr, ok := decode[pushFrame](p.Frame); ok && fr.Op == "push" && len(fr.Entries) > 0 {
			per[p.User] = append(per[p.User], ev{p.At, false, fr.Entries[len(fr.Entries)-1].Seq, ""})
		}
	}
	var out []Anomaly
	for inbox, evs := range per {
		sort.SliceStable(evs, func(i, j int) bool {
			if evs[i].t != evs[j].t {
				return evs[i].t < evs[j].t
			}
			return !evs[i].start && evs[j].start // a return at the same instant counts as before
		})
		var seen int64
		for _, e := range evs {
			if e.start {
				if e.seq <= seen {
					out = append(out, Anomaly{Kind: "regression", Where: "inbox:" + inbox,
						Detail: fmt.Sprintf("%s answered %d, not above %d acknowledged or read before it began", e.what, e.seq, seen), At: e.t})
				}
				continue
			}
			if e.seq > seen {
				seen = e.seq
			}
		}
	}
	return out
}

// invisibleAcks: an entry acknowledged with a seq (a send, read, recall, edit, delete, clear)
// is returned by every sync of the same inbox begun after the acknowledgement whose range holds
// it (above its maxSeq; up to its last entry when hasMore) — unless a delete or clear hides it.
func invisibleAcks(h *History, finals map[string]*finalLog) []Anomaly {
	type ack struct {
		seq  int64
		ret  float64
		what string
	}
	type read struct {
		call, ret float64
		from, hi  int64
		got       map[int64]bool
		who       string
	}
	acks := map[string][]ack{}
	reads := map[string][]read{}
	for i := range h.Ops {
		op := &h.Ops[i]
		if !op.ok() {
			continue
		}
		switch op.Op {
		case "send", "read", "recall", "edit", "delete", "clear":
			res, _ := decode[seqRes](op.Res)
			if res.Seq > 0 {
				acks[op.User] = append(acks[op.User], ack{res.Seq, *op.Ret, op.Dev + " " + op.Op})
			}
		case "sync":
			a, _ := decode[struct {
				MaxSeq int64 `json:"maxSeq"`
			}](op.Args)
			res, _ := decode[syncRes](op.Res)
			r := read{call: op.Call, ret: *op.Ret, from: a.MaxSeq, hi: 1<<62 - 1, got: map[int64]bool{}, who: op.Dev}
			for _, e := range res.Entries {
				r.got[e.Seq] = true
			}
			if res.HasMore && len(res.Entries) > 0 {
				r.hi = res.Entries[len(res.Entries)-1].Seq
			}
			reads[op.User] = append(reads[op.User], r)
		}
	}
	var out []Anomaly
	for user, list := range reads {
		f := finals["inbox:"+user]
		sort.Slice(list, func(i, j int) bool { return list[i].call < list[j].call })
		for _, a := range acks[user] {
			if f != nil && f.hiddenF[a.seq] {
				continue
			}
			// Reads begun after the acknowledgement.
			first := sort.Search(len(list), func(i int) bool { return list[i].call > a.ret })
			for _, r := range list[first:] {
				if a.seq > r.from && a.seq <= r.hi && !r.got[a.seq] {
					out = append(out, Anomaly{Kind: "skip", Where: "inbox:" + user, At: r.call,
						Detail: fmt.Sprintf("%s sync from %d, begun after %s was acknowledged at %d, did not return it", r.who, r.from, a.what, a.seq)})
					break
				}
			}
		}
	}
	return out
}

func head(xs []int64, n int) []int64 {
	if len(xs) > n {
		return xs[:n]
	}
	return xs
}
