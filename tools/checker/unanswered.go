package main

// unansweredHides finds, in the final logs, the delete and clear entries no answered op
// accounts for, so an unanswered delete or clear can be told to have happened (and at which seq)
// or not.
type unansweredHides struct {
	h     *History
	spare map[string][]Entry // user → delete and clear entries not claimed by an answered op
}

func newUnansweredHides(h *History) *unansweredHides {
	claimed := map[string]map[int64]bool{}
	for i := range h.Ops {
		op := &h.Ops[i]
		if (op.Op == "delete" || op.Op == "clear") && op.ok() {
			res, _ := decode[seqRes](op.Res)
			if claimed[op.User] == nil {
				claimed[op.User] = map[int64]bool{}
			}
			claimed[op.User][res.Seq] = true
		}
	}
	u := &unansweredHides{h: h, spare: map[string][]Entry{}}
	for user, entries := range h.Finals {
		for _, e := range entries {
			if (e.Kind == "delete" || e.Kind == "clear") && !claimed[user][e.Seq] && e.From == user {
				u.spare[user] = append(u.spare[user], e)
			}
		}
	}
	return u
}

// resolve: known is false when the user's final log was not read; found says the op happened
// (its entry, now claimed).
func (u *unansweredHides) resolve(user, kind string, seqs []int64, conv string, upTo int64) (Entry, bool, bool) {
	if _, ok := u.h.Finals[user]; !ok {
		return Entry{}, false, false
	}
	for i, e := range u.spare[user] {
		if e.Kind != kind {
			continue
		}
		match := false
		if kind == "delete" {
			var want []int64
			for _, s := range seqs {
				if s < e.Seq {
					want = append(want, s)
				}
			}
			match = sameSet(want, e.Seqs, e.Seq)
		} else {
			match = e.Conv.Key() == conv && e.UpToSeq != nil && *e.UpToSeq == upTo
		}
		if match {
			u.spare[user] = append(u.spare[user][:i:i], u.spare[user][i+1:]...)
			return e, true, true
		}
	}
	return Entry{}, true, false
}

// sameSet: the seqs a delete asked for (below its own seq) are those its entry names.
func sameSet(want, got []int64, below int64) bool {
	set := map[int64]bool{}
	for _, s := range got {
		if s < below {
			set[s] = true
		}
	}
	w := map[int64]bool{}
	for _, s := range want {
		w[s] = true
	}
	if len(w) != len(set) {
		return false
	}
	for s := range w {
		if !set[s] {
			return false
		}
	}
	return true
}
