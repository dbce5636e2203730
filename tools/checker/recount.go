package main

// An independent recount of a conversation list from a raw inbox (the rules of
// docs/protocol.md, "Conversations (v1.1)"; written again here, not imported, so the checker does
// not share a bug with the code it checks). One forward pass for the cursors, then each
// count as a predicate over the messages.

// ConvCount is what the recount says of one conversation.
type ConvCount struct {
	LastSeq    int64
	LastMsgSeq int64
	ReadSeq    int64
	ClearedSeq int64
	Unread     int
	Mentions   int
}

func mentionsUser(e *Entry, self string) bool {
	if e.Kind != "msg" || e.From == self {
		return false
	}
	for _, m := range e.Mentions {
		if m == self || m == "@all" {
			return true
		}
	}
	return false
}

// Recount counts every conversation of `self`'s inbox from its entries with seq <= upTo
// (ascending, hidden ones included: the raw inbox).
func Recount(entries []Entry, self string, upTo int64) map[string]*ConvCount {
	bySeq := map[int64]*Entry{}
	byKey := map[string]*Entry{}
	var inbox []*Entry
	for i := range entries {
		e := &entries[i]
		if e.Seq > upTo {
			break
		}
		inbox = append(inbox, e)
		bySeq[e.Seq] = e
		if _, ok := byKey[e.DedupKey()]; !ok {
			byKey[e.DedupKey()] = e
		}
	}
	convs := map[string]*ConvCount{}
	recalled := map[int64]bool{}
	deleted := map[int64]bool{}
	for _, e := range inbox {
		earlier := func(seq int64) *Entry {
			if seq >= e.Seq {
				return nil
			}
			return bySeq[seq]
		}
		if e.IsActivity() {
			c := convs[e.Conv.Key()]
			if c == nil {
				c = &ConvCount{}
				convs[e.Conv.Key()] = c
			}
			c.LastSeq = e.Seq
			if e.Kind == "msg" && e.From == self {
				c.ReadSeq = e.Seq // sending reads the conversation up to it
			}
			continue
		}
		switch e.Kind {
		case "read":
			if e.UpToSeq != nil {
				if c := convs[e.Conv.Key()]; c != nil {
					c.ReadSeq = max64(c.ReadSeq, min64(*e.UpToSeq, c.LastSeq))
				}
				continue
			}
			seqs := e.Seqs
			if len(seqs) == 0 && e.ReferSeq != 0 {
				seqs = []int64{e.ReferSeq}
			}
			for _, s := range seqs {
				t := earlier(s)
				if t == nil || !t.IsActivity() {
					continue
				}
				if c := convs[t.Conv.Key()]; c != nil {
					c.ReadSeq = max64(c.ReadSeq, t.Seq)
				}
			}
		case "clear":
			if c := convs[e.Conv.Key()]; c != nil {
				upToSeq := c.LastSeq
				if e.UpToSeq != nil {
					upToSeq = *e.UpToSeq
				}
				c.ClearedSeq = max64(c.ClearedSeq, min64(upToSeq, c.LastSeq))
			}
		case "recall":
			if e.Recall == nil {
				continue
			}
			from := e.Recall.From
			if from == "" {
				from = e.From
			}
			if t := byKey[messageKey(from, e.Recall.Appinfo)]; t != nil && t.Kind == "msg" && t.Seq < e.Seq {
				recalled[t.Seq] = true
			}
		case "delete":
			for _, s := range e.Seqs {
				if earlier(s) != nil {
					deleted[s] = true
				}
			}
		}
	}
	for _, t := range inbox {
		if !t.IsActivity() || deleted[t.Seq] || recalled[t.Seq] {
			continue
		}
		c := convs[t.Conv.Key()]
		if t.Seq <= c.ClearedSeq {
			continue
		}
		c.LastMsgSeq = max64(c.LastMsgSeq, t.Seq)
		if t.Seq <= c.ReadSeq || t.Kind != "msg" || t.From == self {
			continue
		}
		c.Unread++
		if mentionsUser(t, self) {
			c.Mentions++
		}
	}
	return convs
}

// StreamSide counts a read-fanout group's stream for `self`: messages from others in
// (cursor, head], not recalled, not naming self (those are counted through the inbox copy).
func StreamSide(stream []Entry, self string, cursor, head int64) (unread, mentions int) {
	recalled := map[string]bool{}
	for _, e := range stream {
		if e.Kind == "recall" && e.Recall != nil && gseqOf(e) <= head {
			from := e.Recall.From
			if from == "" {
				from = e.From
			}
			recalled[messageKey(from, e.Recall.Appinfo)] = true
		}
	}
	for i := range stream {
		e := &stream[i]
		g := gseqOf(*e)
		if e.Kind != "msg" || g <= cursor || g > head || e.From == self || recalled[e.DedupKey()] {
			continue
		}
		named := false
		all := false
		for _, m := range e.Mentions {
			if m == self {
				named = true
			}
			if m == "@all" {
				all = true
			}
		}
		if named {
			continue
		}
		unread++
		if all {
			mentions++
		}
	}
	return unread, mentions
}

func gseqOf(e Entry) int64 {
	if e.Gseq != 0 {
		return e.Gseq
	}
	return e.Seq
}

func max64(a, b int64) int64 {
	if a > b {
		return a
	}
	return b
}

func min64(a, b int64) int64 {
	if a < b {
		return a
	}
	return b
}
