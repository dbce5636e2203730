package main

// byDesign counts what a JetStream rollback took: recipient copies and after-send events of
// acknowledged messages exposed to it (rollbackExposed) that never arrived.
func byDesign(h *History, acks []Ack) map[string]int {
	out := map[string]int{}
	groups := map[string]Group{}
	for _, g := range h.Meta.Groups {
		groups[g.ID] = g
	}
	has := func(log []Entry, key string) bool {
		for _, e := range log {
			if e.DedupKey() == key {
				return true
			}
		}
		return false
	}
	events := map[string]bool{}
	for i := range h.Hooks {
		if hk := &h.Hooks[i]; hk.Kind == "after_send" && hk.Status >= 200 && hk.Status < 300 {
			b, _ := decode[afterSendBody](hk.Body)
			events[messageKey(b.From, b.Appinfo)] = true
		}
	}
	for _, a := range acks {
		if !rollbackExposed(h, a) {
			continue
		}
		out["rollback-exposed-acks"]++
		if !events[a.Key()] {
			out["after-send-lost-in-jetstream-rollback"]++
		}
		var logs [][]Entry
		if u, ok := a.To["user"]; ok {
			logs = append(logs, h.Finals[u])
		} else if g, ok := groups[a.To["group"]]; ok && g.Tier == "huge" {
			logs = append(logs, h.Streams[g.ID])
		} else if ok && !g.Churn {
			for _, m := range g.Members {
				logs = append(logs, h.Finals[m])
			}
		}
		for _, l := range logs {
			if !has(l, a.Key()) {
				out["copies-lost-in-jetstream-rollback"]++
			}
		}
	}
	return out
}
