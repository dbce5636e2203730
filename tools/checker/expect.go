package main

// I4: which logs must hold each acknowledged message at the end of a round.

import (
	"math"
	"sort"
)

// Ack is an acknowledged send.
type Ack struct {
	Sender   string
	Appinfo  string
	To       map[string]string
	Mentions []string
	Seq      int64
	Call     float64
	Ret      float64
}

func (a Ack) Key() string { return messageKey(a.Sender, a.Appinfo) }

// acksOf lists the acknowledged sends. Call is the first attempt's: a resend's message may have
// been stored (and its group's member snapshot taken) by an earlier attempt.
func acksOf(h *History) []Ack {
	first := map[string]float64{}
	for i := range h.Ops {
		op := &h.Ops[i]
		if op.Op != "send" {
			continue
		}
		a, _ := decode[sendArgs](op.Args)
		k := messageKey(op.User, a.Appinfo)
		if t, ok := first[k]; !ok || op.Call < t {
			first[k] = op.Call
		}
	}
	var out []Ack
	for i := range h.Ops {
		op := &h.Ops[i]
		if op.Op != "send" || !op.ok() {
			continue
		}
		a, _ := decode[sendArgs](op.Args)
		res, _ := decode[sendRes](op.Res)
		out = append(out, Ack{Sender: op.User, Appinfo: a.Appinfo, To: a.To, Mentions: a.Mentions, Seq: res.Seq, Call: first[messageKey(op.User, a.Appinfo)], Ret: *op.Ret})
	}
	return out
}

// membership answers "was this user certainly a member throughout [from, to]".
type membership struct {
	initial map[string]bool
	// per member: the adds acknowledged and the removes attempted, each as [call, return]; a
	// remove not answered ok may take effect at any time after its call (end +Inf)
	added   map[string][]span
	removed map[string][]span
}

type span struct{ call, end float64 }

type groupArgs struct {
	Group   string   `json:"group"`
	Members []string `json:"members"`
}

func memberships(h *History) map[string]*membership {
	out := map[string]*membership{}
	for _, g := range h.Meta.Groups {
		m := &membership{initial: map[string]bool{}, added: map[string][]span{}, removed: map[string][]span{}}
		for _, u := range g.Members {
			m.initial[u] = true
		}
		out[g.ID] = m
	}
	for i := range h.Ops {
		op := &h.Ops[i]
		if op.Op != "group.add" && op.Op != "group.remove" {
			continue
		}
		a, _ := decode[groupArgs](op.Args)
		m := out[a.Group]
		if m == nil {
			continue
		}
		for _, u := range a.Members {
			if op.Op == "group.add" && op.ok() {
				m.added[u] = append(m.added[u], span{op.Call, *op.Ret})
			}
			if op.Op == "group.remove" && !definitelyRefused(op) {
				end := math.Inf(1)
				if op.ok() {
					end = *op.Ret
				}
				m.removed[u] = append(m.removed[u], span{op.Call, end})
			}
		}
	}
	return out
}

// certainlyIn: some add (or the initial membership) was acknowledged before `from`, and no
// remove attempted up to `to` can have taken effect after it. A remove that overlaps the add in
// time may come after it, even one called before the add returned.
func (m *membership) certainlyIn(user string, from, to float64) bool {
	adds := m.added[user]
	if m.initial[user] {
		adds = append([]span{{-1, -1}}, adds...)
	}
	for _, a := range adds {
		if a.end >= from {
			continue
		}
		followed := false
		for _, r := range m.removed[user] {
			if r.end > a.call && r.call <= to {
				followed = true
				break
			}
		}
		if !followed {
			return true
		}
	}
	return false
}

// rollbackExposed: the ack came after the JetStream store was copied and before a rollback to
// that copy stopped the server, so its jobs (recipient copies, its after-send event) were
// accepted by the store the rollback threw away, and any not finished by then are gone — the
// documented window, measured apart from the anomalies.
func rollbackExposed(h *History, a Ack) bool {
	snapshot := firstSnapshot(h)
	for _, f := range h.Faults {
		if f.Kind == "nats-rollback" && snapshot >= 0 && snapshot <= a.Ret && a.Ret <= rollbackStopped(f) {
			return true
		}
	}
	return false
}

// firstSnapshot: when the stores were first copied, or -1.
func firstSnapshot(h *History) float64 {
	snapshot := -1.0
	for _, f := range h.Faults {
		if f.Kind == "snapshot" && (snapshot < 0 || f.At < snapshot) {
			snapshot = f.At
		}
	}
	return snapshot
}

// rollbackStopped: until when the old server could acknowledge (histories without the time of the
// stop: the fault's start).
func rollbackStopped(f Record) float64 {
	if f.Stopped > 0 {
		return f.Stopped
	}
	return f.At
}

// expectations: partition → the keys its final read must hold. Copies that only a job writes
// are not demanded of an ack exposed to a JetStream rollback (the sender's own copy always is).
func expectations(h *History, acks []Ack) map[string][]string {
	groups := map[string]Group{}
	for _, g := range h.Meta.Groups {
		groups[g.ID] = g
	}
	members := memberships(h)
	set := map[string]map[string]bool{}
	need := func(part, key string) {
		if set[part] == nil {
			set[part] = map[string]bool{}
		}
		set[part][key] = true
	}
	for _, a := range acks {
		need("inbox:"+a.Sender, a.Key())
		if rollbackExposed(h, a) {
			continue
		}
		if u, ok := a.To["user"]; ok {
			need("inbox:"+u, a.Key())
			continue
		}
		g, ok := groups[a.To["group"]]
		if !ok {
			continue
		}
		m := members[g.ID]
		if g.Tier == "huge" {
			need("stream:"+g.ID, a.Key())
			for _, u := range a.Mentions {
				if u != "@all" && u != a.Sender && m.certainlyIn(u, a.Call, a.Ret) {
					need("inbox:"+u, a.Key())
				}
			}
			continue
		}
		for _, u := range allMembers(g, m) {
			if m.certainlyIn(u, a.Call, a.Ret) {
				need("inbox:"+u, a.Key())
			}
		}
	}
	out := map[string][]string{}
	for part, keys := range set {
		for k := range keys {
			out[part] = append(out[part], k)
		}
		sort.Strings(out[part])
	}
	return out
}

func allMembers(g Group, m *membership) []string {
	seen := map[string]bool{}
	var out []string
	for _, u := range g.Members {
		if !seen[u] {
			seen[u] = true
			out = append(out, u)
		}
	}
	for u := range m.added {
		if !seen[u] {
			seen[u] = true
			out = append(out, u)
		}
	}
	sort.Strings(out)
	return out
}
