package main

// Checks of the state derived from the inboxes: conversation states against a recount of the
// same inbox, after-send events against acknowledged sends (notifications: notify.go).

import "fmt"

type wireConv struct {
	Conv         Conv   `json:"conv"`
	LastSeq      int64  `json:"lastSeq"`
	Last         *Entry `json:"last"`
	ReadSeq      int64  `json:"readSeq"`
	ClearedSeq   int64  `json:"clearedSeq"`
	Unread       int    `json:"unread"`
	Mentions     int    `json:"mentions"`
	AsOfSeq      int64  `json:"asOfSeq"`
	LastGseq     *int64 `json:"lastGseq"`
	ReadGseq     *int64 `json:"readGseq"`
	UnreadCapped bool   `json:"unreadCapped"`
}

type convsRes struct {
	Convs   []wireConv `json:"convs"`
	HeadSeq int64      `json:"headSeq"`
}

// checkConvStates: every conversation state a client was given equals the recount.
func checkConvStates(h *History) (checked int, out []Anomaly) {
	cache := map[string]map[int64]map[string]*ConvCount{}
	recountAt := func(user string, at int64) map[string]*ConvCount {
		if cache[user] == nil {
			cache[user] = map[int64]map[string]*ConvCount{}
		}
		if c, ok := cache[user][at]; ok {
			return c
		}
		c := Recount(h.Finals[user], user, at)
		cache[user][at] = c
		return c
	}
	// atLeast: conv key → the seq a state of it must be exact at or past (conversations: the
	// answer's headSeq; sync: the newest returned activity entry of the conversation).
	check := func(user, who string, when float64, states []wireConv, headSeq int64, atLeast map[string]int64) {
		if _, ok := h.Finals[user]; !ok {
			return
		}
		for _, st := range states {
			// Each state is exact at its asOfSeq (the newest entry that concerned it). A
			// `conversations` answer's headSeq is read beside the states, so a state may be
			// newer than it (protocol.md: an entry appended during the call may come in both).
			at := max64(st.AsOfSeq, max64(headSeq, atLeast[st.Conv.Key()]))
			checked++
			want := recountAt(user, at)[st.Conv.Key()]
			where := "inbox:" + user
			if want == nil {
				out = append(out, Anomaly{Kind: "conv-drift", Where: where, At: when,
					Detail: fmt.Sprintf("%s: %s listed at %d, but the inbox has no such conversation there", who, st.Conv.Key(), at)})
				continue
			}
			unread, mentions := want.Unread, want.Mentions
			stream := st.LastGseq != nil
			if stream {
				cursor := int64(0)
				if st.ReadGseq != nil {
					cursor = *st.ReadGseq
				}
				su, sm := StreamSide(h.Streams[st.Conv.ID], user, cursor, *st.LastGseq)
				unread += su
				mentions += sm
			}
			var diffs []string
			if st.UnreadCapped {
				if st.Unread > unread {
					diffs = append(diffs, fmt.Sprintf("unread %d (capped) > recount %d", st.Unread, unread))
				}
			} else {
				if st.Unread != unread {
					diffs = append(diffs, fmt.Sprintf("unread %d, recount %d", st.Unread, unread))
				}
				if st.Mentions != mentions {
					diffs = append(diffs, fmt.Sprintf("mentions %d, recount %d", st.Mentions, mentions))
				}
			}
			if st.LastSeq != want.LastSeq {
				diffs = append(diffs, fmt.Sprintf("lastSeq %d, recount %d", st.LastSeq, want.LastSeq))
			}
			if st.ReadSeq != want.ReadSeq {
				diffs = append(diffs, fmt.Sprintf("readSeq %d, recount %d", st.ReadSeq, want.ReadSeq))
			}
			if st.ClearedSeq != want.ClearedSeq {
				diffs = append(diffs, fmt.Sprintf("clearedSeq %d, recount %d", st.ClearedSeq, want.ClearedSeq))
			}
			if !stream {
				lastSeq := int64(0)
				if st.Last != nil {
					lastSeq = st.Last.Seq
				}
				if lastSeq != want.LastMsgSeq {
					diffs = append(diffs, fmt.Sprintf("last message at %d, recount %d", lastSeq, want.LastMsgSeq))
				}
			}
			if len(diffs) > 0 {
				out = append(out, Anomaly{Kind: "conv-drift", Where: where, At: when,
					Detail: fmt.Sprintf("%s: %s exact at %d: %v", who, st.Conv.Key(), at, diffs)})
			}
		}
	}
	for i := range h.Ops {
		op := &h.Ops[i]
		if !op.ok() {
			continue
		}
		switch op.Op {
		case "conversations":
			res, _ := decode[convsRes](op.Res)
			check(op.User, op.Dev+" conversations", *op.Ret, res.Convs, res.HeadSeq, nil)
		case "sync":
			res, _ := decode[convsRes](op.Res)
			entries, _ := decode[syncRes](op.Res)
			newest := map[string]int64{}
			for _, e := range entries.Entries {
				if e.IsActivity() {
					newest[e.Conv.Key()] = max64(newest[e.Conv.Key()], e.Seq)
				}
			}
			check(op.User, op.Dev+" sync convs", *op.Ret, res.Convs, 0, newest)
		}
	}
	for i := range h.Pushes {
		p := &h.Pushes[i]
		fr, _ := decode[struct {
			Op    string     `json:"op"`
			Convs []wireConv `json:"convs"`
		}](p.Frame)
		if fr.Op == "push" {
			check(p.User, p.Dev+" push convs", p.At, fr.Convs, 0, nil)
		}
	}
	return checked, out
}

type afterSendBody struct {
	From    string `json:"from"`
	Appinfo string `json:"appinfo"`
	Seq     int64  `json:"seq"`
}

// checkAfterSend: every acknowledged message's event arrived (acknowledged by the receiver) at
// least once, naming the sender's seq; and every event names a stored message.
func checkAfterSend(h *History, acks []Ack) (events int, out []Anomaly) {
	got := map[string][]int64{}
	for i := range h.Hooks {
		hk := &h.Hooks[i]
		if hk.Kind != "after_send" || hk.Status < 200 || hk.Status > 299 {
			continue
		}
		events++
		b, _ := decode[afterSendBody](hk.Body)
		key := messageKey(b.From, b.Appinfo)
		got[key] = append(got[key], b.Seq)
		if final, ok := h.Finals[b.From]; ok {
			stored := false
			for _, e := range final {
				if e.Seq == b.Seq && e.DedupKey() == key {
					stored = true
					break
				}
			}
			if !stored {
				out = append(out, Anomaly{Kind: "after-send-phantom", Where: "inbox:" + b.From, At: hk.At,
					Detail: fmt.Sprintf("after-send event for %s at %d names no stored message", key, b.Seq)})
			}
		}
	}
	for _, a := range acks {
		seqs := got[a.Key()]
		if len(seqs) == 0 && rollbackExposed(h, a) {
			continue // counted by byDesign
		}
		if len(seqs) == 0 {
			out = append(out, Anomaly{Kind: "after-send-missing", Where: "inbox:" + a.Sender, At: a.Ret,
				Detail: fmt.Sprintf("no after-send event for acknowledged %s (seq %d)", a.Key(), a.Seq)})
			continue
		}
		for _, s := range seqs {
			if s != a.Seq {
				out = append(out, Anomaly{Kind: "after-send-missing", Where: "inbox:" + a.Sender, At: a.Ret,
					Detail: fmt.Sprintf("after-send event for %s names seq %d, the send was acknowledged at %d", a.Key(), s, a.Seq)})
				break
			}
		}
	}
	return events, out
}
