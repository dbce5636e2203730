package main

// From a round's history to porcupine operations, one partition per log: `inbox:<user>` for
// every inbox and `stream:<group>` for every read-fanout group stream.

import (
	"fmt"
	"math"
	"sort"

	"github.com/anishathalye/porcupine"
)

func toConv(to map[string]string) string {
	if u, ok := to["user"]; ok {
		return "user:" + u
	}
	return "group:" + to["group"]
}

// recOf: what the model keeps of an entry. The conversation matters only for what a clear
// hides (activity entries); leaving it out of the rest keeps states that differ only in the
// order an op and a read revealing its entry were placed equal (porcupine's cache then sees them
// as one: without it, every such pair doubles the search).
func recOf(e Entry) rec {
	if e.IsActivity() {
		return rec{seq: e.Seq, key: e.DedupKey(), activity: 1, conv: e.Conv.Key()}
	}
	return rec{seq: e.Seq, key: e.DedupKey()}
}

func hidesOf(entries []Entry) []hideOf {
	var out []hideOf
	for _, e := range entries {
		switch e.Kind {
		case "delete":
			var seqs []int64
			for _, s := range e.Seqs {
				if s < e.Seq {
					seqs = append(seqs, s)
				}
			}
			out = append(out, hideOf{seqs: seqs})
		case "clear":
			if e.UpToSeq != nil {
				out = append(out, hideOf{clearConv: e.Conv.Key(), clearUpTo: *e.UpToSeq})
			}
		}
	}
	return out
}

func streamRecs(messages []Entry) []rec {
	out := make([]rec, 0, len(messages))
	for _, m := range messages {
		seq := m.Gseq
		if seq == 0 {
			seq = m.Seq
		}
		out = append(out, rec{seq: seq, key: m.DedupKey()})
	}
	return out
}

// partitions builds the operations of every log. never: the return time of an operation whose
// answer never came (after everything else).
func partitions(h *History, must map[string][]string) map[string][]porcupine.Operation {
	never := int64(math.Ceil(h.End*1000)) + 1_000_000
	parts := map[string][]porcupine.Operation{}
	unanswered := newUnansweredHides(h)
	clientOf := map[string]int{}
	add := func(part, dev string, call float64, ret *float64, in *logInput) {
		id, ok := clientOf[dev]
		if !ok {
			id = len(clientOf)
			clientOf[dev] = id
		}
		r := never
		if ret != nil {
			r = int64(math.Ceil(*ret * 1000))
		}
		parts[part] = append(parts[part], porcupine.Operation{ClientId: id, Input: in, Call: int64(math.Floor(call * 1000)), Return: r})
	}
	for i := range h.Ops {
		op := &h.Ops[i]
		inbox := "inbox:" + op.User
		answered := op.Ret != nil && len(op.Res) > 0
		ok := op.ok()
		switch op.Op {
		case "send":
			if !ok {
				continue // unanswered or refused: whatever it stored shows up in reads
			}
			a, _ := decode[sendArgs](op.Args)
			res, _ := decode[sendRes](op.Res)
			in := &logInput{kind: inAppend, fresh: !res.Duplicate,
				rec: rec{seq: res.Seq, key: messageKey(op.User, a.Appinfo), activity: 1, conv: toConv(a.To)}}
			in.desc = fmt.Sprintf("%s send %s -> %d dup=%v", op.Dev, a.Appinfo, res.Seq, res.Duplicate)
			add(inbox, op.Dev, op.Call, op.Ret, in)
		case "read", "recall", "edit", "delete", "clear":
			a, _ := decode[controlArgs](op.Args)
			in := &logInput{kind: inAppend}
			switch op.Op {
			case "read":
				in.rec = rec{key: "read:" + op.User + ":", prefix: true}
				in.fresh = true
			case "recall":
				from := a.From
				if from == "" {
					from = op.User
				}
				in.rec = rec{key: "recall:" + from + ":" + a.Appinfo}
			case "edit":
				if a.EditID == "" {
					in.rec = rec{key: "edit:" + op.User + ":", prefix: true}
					in.fresh = true
				} else {
					in.rec = rec{key: "edit:" + op.User + ":" + a.EditID}
				}
			case "delete":
				in.rec = rec{key: "delete:" + op.User + ":", prefix: true}
				in.fresh = true
				in.hideSeqs = a.Seqs
			case "clear":
				in.rec = rec{key: "clear:" + op.User + ":", prefix: true}
				in.fresh = true
				if a.Conv != nil && a.UpToSeq != nil {
					in.clearConv, in.clearUpTo = a.Conv.Key(), *a.UpToSeq
				}
			}
			in.rec.conv = ""
			if ok {
				res, _ := decode[seqRes](op.Res)
				in.rec.seq = res.Seq
				if in.rec.seq > 0 {
					var kept []int64
					for _, s := range in.hideSeqs {
						if s < in.rec.seq {
							kept = append(kept, s)
						}
					}
					in.hideSeqs = kept
				}
				in.desc = fmt.Sprintf("%s %s -> %d", op.Dev, op.Op, in.rec.seq)
				add(inbox, op.Dev, op.Call, op.Ret, in)
			} else if (op.Op == "delete" || op.Op == "clear") && !definitelyRefused(op) {
				ret := op.Ret
				if !answered {
					ret = nil
				}
				// The final log says whether it happened, and where: then it is an append at a
				// known seq, its return unknown; if not there, it never happened. Only without a
				// final log are both outcomes left open (which is costly to search).
				if entry, known, found := unanswered.resolve(op.User, op.Op, in.hideSeqs, in.clearConv, in.clearUpTo); known {
					if found {
						in.rec = recOf(entry)
						in.desc = fmt.Sprintf("%s %s (no answer; stored at %d)", op.Dev, op.Op, entry.Seq)
						add(inbox, op.Dev, op.Call, ret, in)
					}
					continue
				}
				hide := &logInput{kind: inHide, hideSeqs: in.hideSeqs, clearConv: in.clearConv, clearUpTo: in.clearUpTo,
					desc: fmt.Sprintf("%s %s (no answer)", op.Dev, op.Op)}
				add(inbox, op.Dev, op.Call, ret, hide)
			}
		case "sync":
			if !ok {
				continue
			}
			a, _ := decode[struct {
				MaxSeq int64 `json:"maxSeq"`
			}](op.Args)
			res, _ := decode[syncRes](op.Res)
			in := &logInput{kind: inRead, maxSeq: a.MaxSeq, hasMore: res.HasMore, readHides: hidesOf(res.Entries)}
			for _, e := range res.Entries {
				in.entries = append(in.entries, recOf(e))
			}
			in.desc = fmt.Sprintf("%s sync from %d -> %d entries", op.Dev, a.MaxSeq, len(res.Entries))
			add(inbox, op.Dev, op.Call, op.Ret, in)
		case "group.history":
			if !ok {
				continue
			}
			a, _ := decode[groupHistoryArgs](op.Args)
			if a.AfterGseq == nil || a.BeforeGseq != nil || !isStream(h, a.Group) {
				continue
			}
			res, _ := decode[groupHistoryRes](op.Res)
			in := &logInput{kind: inRead, maxSeq: *a.AfterGseq, hasMore: res.HasMore, entries: streamRecs(res.Messages)}
			in.desc = fmt.Sprintf("%s group.history %s after %d -> %d", op.Dev, a.Group, *a.AfterGseq, len(res.Messages))
			add("stream:"+a.Group, op.Dev, op.Call, op.Ret, in)
		}
	}
	users := make([]string, 0, len(h.Finals))
	for u := range h.Finals {
		users = append(users, u)
	}
	sort.Strings(users)
	for _, u := range users {
		entries := h.Finals[u]
		in := &logInput{kind: inRead, raw: true, readHides: hidesOf(entries), mustContain: must["inbox:"+u], excused: hiddenInFinal(entries)}
		for _, e := range entries {
			in.entries = append(in.entries, recOf(e))
		}
		in.desc = fmt.Sprintf("final inbox of %s: %d entries", u, len(entries))
		call := h.FinalCalls[u]
		ret := call[1]
		add("inbox:"+u, "final", call[0], &ret, in)
	}
	for g, msgs := range h.Streams {
		in := &logInput{kind: inRead, raw: true, entries: streamRecs(msgs), mustContain: must["stream:"+g]}
		in.desc = fmt.Sprintf("final stream of %s: %d messages", g, len(msgs))
		call := h.StreamCalls[g]
		ret := call[1]
		add("stream:"+g, "final", call[0], &ret, in)
	}
	return parts
}

// definitelyRefused: an error answer that says nothing was stored.
func definitelyRefused(op *Record) bool {
	rep, answered := op.reply()
	if !answered || rep.OK || rep.Error == nil {
		return false
	}
	switch rep.Error.Code {
	case "BAD_REQUEST", "NOT_FOUND", "FORBIDDEN", "RECALL_EXPIRED", "TOO_LARGE", "UNAUTHORIZED":
		return true
	}
	return false
}

func isStream(h *History, group string) bool {
	for _, g := range h.Meta.Groups {
		if g.ID == group {
			return g.Tier == "huge"
		}
	}
	return false
}

// hiddenInFinal: the seqs the final inbox's own deletes and clears hide (a read may have left
// them out because they were already hidden then).
func hiddenInFinal(entries []Entry) map[int64]bool {
	out := map[int64]bool{}
	cleared := map[string]int64{}
	for _, hd := range hidesOf(entries) {
		for _, s := range hd.seqs {
			out[s] = true
		}
		if hd.clearConv != "" && hd.clearUpTo > cleared[hd.clearConv] {
			cleared[hd.clearConv] = hd.clearUpTo
		}
	}
	for _, e := range entries {
		if e.IsActivity() {
			if upTo, ok := cleared[e.Conv.Key()]; ok && e.Seq <= upTo {
				out[e.Seq] = true
			}
		}
	}
	return out
}
