package main

// Direct checks of I1–I4 against the final logs: they name what went wrong (the model check in
// logmodel.go only says that no order of the operations explains them). They take the stored
// logs at the end of the round as the truth and hold every observation against them.

import (
	"encoding/json"
	"fmt"
	"sort"
)

// Anomaly is one violation found in a round.
type Anomaly struct {
	Kind   string  `json:"kind"`
	Where  string  `json:"where"`
	Detail string  `json:"detail"`
	At     float64 `json:"at,omitempty"`
}

type finalLog struct {
	bySeq   map[int64]Entry
	byKey   map[string]int64
	seqs    []int64
	hiddenF map[int64]bool
}

func indexFinal(entries []Entry, stream bool) *finalLog {
	f := &finalLog{bySeq: map[int64]Entry{}, byKey: map[string]int64{}}
	for _, e := range entries {
		if stream && e.Gseq != 0 {
			e.Seq = e.Gseq
		}
		f.bySeq[e.Seq] = e
		if _, ok := f.byKey[e.DedupKey()]; !ok {
			f.byKey[e.DedupKey()] = e.Seq
		}
		f.seqs = append(f.seqs, e.Seq)
	}
	if !stream {
		f.hiddenF = hiddenInFinal(entries)
	}
	return f
}

type pushFrame struct {
	Op       string  `json:"op"`
	PrevSeq  int64   `json:"prevSeq"`
	Entries  []Entry `json:"entries"`
	Group    string  `json:"group"`
	PrevGseq int64   `json:"prevGseq"`
	Messages []Entry `json:"messages"`
	Convs    []json.RawMessage
}

func directChecks(h *History, acks []Ack, must map[string][]string) []Anomaly {
	var out []Anomaly
	add := func(kind, where, format string, args ...interface{}) {
		out = append(out, Anomaly{Kind: kind, Where: where, Detail: fmt.Sprintf(format, args...)})
	}
	finals := map[string]*finalLog{}
	for u, entries := range h.Finals {
		finals["inbox:"+u] = indexFinal(entries, false)
		checkFinalLog("inbox:"+u, entries, false, add)
	}
	for g, msgs := range h.Streams {
		finals["stream:"+g] = indexFinal(msgs, true)
		checkFinalLog("stream:"+g, msgs, true, add)
	}
	// I4: every acknowledged message in every log that must hold it.
	parts := make([]string, 0, len(must))
	for p := range must {
		parts = append(parts, p)
	}
	sort.Strings(parts)
	for _, part := range parts {
		f := finals[part]
		if f == nil {
			add("lost", part, "no final read of this log (%d acknowledged messages unverified)", len(must[part]))
			continue
		}
		for _, key := range must[part] {
			if _, ok := f.byKey[key]; !ok {
				add("lost", part, "acknowledged %s is not in the final log", key)
			}
		}
	}
	// Acks: the seq answered holds this message (I1: no seq handed out twice), and a fresh
	// append lands above everything the same inbox had shown or acknowledged before it began.
	for _, a := range acks {
		f := finals["inbox:"+a.Sender]
		if f == nil {
			continue
		}
		if e, ok := f.bySeq[a.Seq]; ok && e.DedupKey() != a.Key() {
			add("reused", "inbox:"+a.Sender, "ack of %s at %d, but %d holds %s", a.Key(), a.Seq, a.Seq, e.DedupKey())
		} else if !ok {
			if seq, has := f.byKey[a.Key()]; has {
				add("reused", "inbox:"+a.Sender, "ack of %s at %d, but it is stored at %d", a.Key(), a.Seq, seq)
			}
		}
	}
	out = append(out, freshOrder(h)...)
	out = append(out, invisibleAcks(h, finals)...)
	// Reads and pushes against the final logs.
	for i := range h.Ops {
		op := &h.Ops[i]
		if !op.ok() {
			continue
		}
		switch op.Op {
		case "sync":
			a, _ := decode[struct {
				MaxSeq int64 `json:"maxSeq"`
			}](op.Args)
			res, _ := decode[syncRes](op.Res)
			checkRead(finals["inbox:"+op.User], "inbox:"+op.User, op.Dev+" sync", a.MaxSeq, res.Entries, false, op.Call, add)
		case "group.history":
			a, _ := decode[groupHistoryArgs](op.Args)
			if a.AfterGseq == nil || a.BeforeGseq != nil || !isStream(h, a.Group) {
				continue
			}
			res, _ := decode[groupHistoryRes](op.Res)
			msgs := append([]Entry{}, res.Messages...)
			for j := range msgs {
				if msgs[j].Gseq != 0 {
					msgs[j].Seq = msgs[j].Gseq
				}
			}
			checkRead(finals["stream:"+a.Group], "stream:"+a.Group, op.Dev+" group.history", *a.AfterGseq, msgs, true, op.Call, add)
		}
	}
	for i := range h.Pushes {
		p := &h.Pushes[i]
		fr, ok := decode[pushFrame](p.Frame)
		if !ok {
			continue
		}
		if fr.Op == "push" {
			// A push is contiguous: every entry between prevSeq and its last is in the frame.
			checkRead(finals["inbox:"+p.User], "inbox:"+p.User, p.Dev+" push", fr.PrevSeq, fr.Entries, true, p.At, add)
		} else if fr.Op == "group.push" && isStream(h, fr.Group) {
			msgs := append([]Entry{}, fr.Messages...)
			for j := range msgs {
				if msgs[j].Gseq != 0 {
					msgs[j].Seq = msgs[j].Gseq
				}
			}
			// Stream pushes may skip gseqs the member may not read; only identity and order are promised.
			checkIdentity(finals["stream:"+fr.Group], "stream:"+fr.Group, p.Dev+" group.push", fr.PrevGseq, msgs, p.At, add)
		}
	}
	if h.DeadLetters > 0 {
		add("deadletter", "queue", "%d jobs dead-lettered at the end of the round", h.DeadLetters)
	}
	return out
}

func checkFinalLog(part string, entries []Entry, stream bool, add func(kind, where, format string, args ...interface{})) {
	var prev int64
	seen := map[string]int64{}
	for _, e := range entries {
		seq := e.Seq
		if stream && e.Gseq != 0 {
			seq = e.Gseq
		}
		if seq <= prev {
			add("regression", part, "final log not strictly increasing: %d after %d", seq, prev)
		}
		prev = seq
		if at, ok := seen[e.DedupKey()]; ok {
			add("duplicate", part, "%s stored twice, at %d and %d", e.DedupKey(), at, seq)
		} else {
			seen[e.DedupKey()] = seq
		}
	}
}

// checkRead: order, identity against the final log, and no skipped entry in (from, last].
// strict: nothing is excused (a push carries entries as appended; a stream hides nothing).
func checkRead(f *finalLog, part, who string, from int64, entries []Entry, strict bool, at float64, add func(kind, where, format string, args ...interface{})) {
	if f == nil {
		return
	}
	if !checkIdentity(f, part, who, from, entries, at, add) || len(entries) == 0 {
		return
	}
	// Bound by the last entry returned: what was appended after the read is not expected in it.
	hi := entries[len(entries)-1].Seq
	got := map[int64]bool{}
	for _, e := range entries {
		got[e.Seq] = true
	}
	var missing []int64
	for _, s := range f.seqs {
		if s <= from || s > hi || got[s] {
			continue
		}
		if !strict && f.hiddenF[s] {
			continue
		}
		missing = append(missing, s)
	}
	if len(missing) > 0 {
		add("skip", part, "%s from %d (returned up to %d) left out %v", who, from, entries[len(entries)-1].Seq, head(missing, 10))
	}
}

// checkIdentity: ascending, above `from`, and each seq holds in the final log what was read.
func checkIdentity(f *finalLog, part, who string, from int64, entries []Entry, at float64, add func(kind, where, format string, args ...interface{})) bool {
	if f == nil {
		return false
	}
	prev := from
	for _, e := range entries {
		if e.Seq <= prev {
			add("regression", part, "%s from %d: %d after %d", who, from, e.Seq, prev)
			return false
		}
		prev = e.Seq
		stored, ok := f.bySeq[e.Seq]
		if !ok {
			add("lost", part, "%s read %s at %d, which the final log does not hold", who, e.DedupKey(), e.Seq)
			continue
		}
		if stored.DedupKey() != e.DedupKey() {
			add("reused", part, "%s read %s at %d, the final log holds %s there", who, e.DedupKey(), e.Seq, stored.DedupKey())
		}
	}
	return true
}
