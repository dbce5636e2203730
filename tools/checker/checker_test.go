package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func load(t *testing.T, name string) *History {
	t.Helper()
	f, err := os.Open(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	h, err := ParseHistory(f)
	if err != nil {
		t.Fatal(err)
	}
	return h
}

func TestCleanHistoryPasses(t *testing.T) {
	rep := Check(load(t, "clean.jsonl"), 10*time.Second)
	if len(rep.Anomalies) != 0 || rep.Inconclusive != 0 {
		t.Fatalf("clean history rejected: %s", rep.Text())
	}
	if rep.Linearizable != 3 || rep.ConvStates != 1 || rep.AfterSend != 3 || rep.Notify.BadgeChecked != 1 {
		t.Fatalf("clean history not fully checked: %s", rep.Text())
	}
}

// Each broken history is rejected, for the right reason, and (for I1–I4) by the model too.
func TestBrokenHistoriesAreRejected(t *testing.T) {
	cases := []struct {
		file      string
		kind      string
		porcupine bool
	}{
		{"lost-ack.jsonl", "lost", true},
		{"duplicate.jsonl", "duplicate", true},
		{"seq-back.jsonl", "regression", true},
		{"skip.jsonl", "skip", true},
		{"unread-drift.jsonl", "conv-drift", false},
		{"after-send-missing.jsonl", "after-send-missing", false},
	}
	for _, c := range cases {
		t.Run(c.file, func(t *testing.T) {
			rep := Check(load(t, c.file), 10*time.Second)
			if rep.Counts[c.kind] == 0 {
				t.Fatalf("%s: no %s anomaly: %s", c.file, c.kind, rep.Text())
			}
			if c.porcupine && rep.Counts["nonlinearizable"] == 0 {
				t.Fatalf("%s: porcupine accepted it: %s", c.file, rep.Text())
			}
			if !c.porcupine && rep.Counts["nonlinearizable"] != 0 {
				t.Fatalf("%s: the log model rejected a history whose logs are fine: %s", c.file, rep.Text())
			}
		})
	}
}

func TestTruncatedHistoryIsAnError(t *testing.T) {
	_, err := ParseHistory(strings.NewReader(`{"t":"meta","round":1}` + "\n" + `{"t":"op","dev":`))
	if err == nil {
		t.Fatal("a truncated line parsed")
	}
	_, err = ParseHistory(strings.NewReader(`{"t":"op"}` + "\n"))
	if err == nil {
		t.Fatal("a history without meta parsed")
	}
}

// A JetStream rollback past an acknowledged send is the documented window: what it takes is
// counted apart, not as an anomaly; the same loss without the rollback is an anomaly.
func TestJetStreamRollbackWindowIsMeasuredApart(t *testing.T) {
	h := load(t, "lost-ack.jsonl")
	h.Faults = append(h.Faults, Record{T: "fault", Kind: "snapshot", At: 500}, Record{T: "fault", Kind: "nats-rollback", At: 1500})
	rep := Check(h, 10*time.Second)
	if len(rep.Anomalies) != 0 {
		t.Fatalf("a loss inside the rollback window reported as an anomaly: %s", rep.Text())
	}
	if rep.ByDesign["copies-lost-in-jetstream-rollback"] != 1 || rep.ByDesign["rollback-exposed-acks"] != 3 {
		t.Fatalf("by design: %v", rep.ByDesign)
	}
	h = load(t, "lost-ack.jsonl")
	h.Faults = append(h.Faults, Record{T: "fault", Kind: "snapshot", At: 500}, Record{T: "fault", Kind: "nats-rollback", At: 1005})
	if rep := Check(h, 10*time.Second); rep.Counts["lost"] == 0 {
		t.Fatalf("a rollback before the ack excused its loss: %s", rep.Text())
	}
}

// A notification whose job a JetStream rollback can have taken (published after the store's copy,
// before NATS came back from it) is counted apart; outside that window a missing one is an anomaly.
func TestNotificationTakenByAJetStreamRollbackIsMeasuredApart(t *testing.T) {
	build := func(faults ...Record) *History {
		h := load(t, "clean.jsonl")
		hooks := h.Hooks[:0]
		for _, hk := range h.Hooks {
			if hk.Kind != "notify" {
				hooks = append(hooks, hk)
			}
		}
		h.Hooks = hooks // carol's notification of alice/a2 (stored at 1020–1030, seen 1105) never came
		h.Faults = append(h.Faults, faults...)
		return h
	}
	if rep := Check(build(), 10*time.Second); rep.Counts["notify-missing"] != 1 {
		t.Fatalf("a missing notification passed: %s", rep.Text())
	}
	// Copy taken before the message, rollback after it: the job can only have been in the lost part.
	rep := Check(build(Record{T: "fault", Kind: "snapshot", At: 500}, Record{T: "fault", Kind: "nats-rollback", At: 1500, Stopped: 1550, End: 1600}), 10*time.Second)
	if len(rep.Anomalies) != 0 || rep.ByDesign["notify-lost-in-jetstream-rollback"] != 1 {
		t.Fatalf("a notification inside the rollback window: %v %s", rep.ByDesign, rep.Text())
	}
	// Copy taken after the job was published (and delivered or not): the rollback cannot take it.
	rep = Check(build(Record{T: "fault", Kind: "snapshot", At: 3000}, Record{T: "fault", Kind: "nats-rollback", At: 3500, End: 3600}), 10*time.Second)
	if rep.Counts["notify-missing"] != 1 {
		t.Fatalf("a rollback whose copy came after the job excused it: %s", rep.Text())
	}
	// NATS back from the rollback before the message was stored: its job went into the restored store.
	rep = Check(build(Record{T: "fault", Kind: "snapshot", At: 500}, Record{T: "fault", Kind: "nats-rollback", At: 700, Stopped: 800, End: 900}), 10*time.Second)
	if rep.Counts["notify-missing"] != 1 {
		t.Fatalf("a rollback over before the message excused it: %s", rep.Text())
	}
}

// The rollback takes what the old server acknowledged until it stopped, not only until the fault
// began: an ack between the two (the stop takes a moment) is inside the window.
func TestJetStreamRollbackWindowLastsUntilTheServerStopped(t *testing.T) {
	// lost-ack.jsonl: alice's send to bob, acknowledged at 1010, bob's copy missing.
	h := load(t, "lost-ack.jsonl")
	h.Faults = append(h.Faults, Record{T: "fault", Kind: "snapshot", At: 500}, Record{T: "fault", Kind: "nats-rollback", At: 1005, Stopped: 1200, End: 1400})
	if rep := Check(h, 10*time.Second); len(rep.Anomalies) != 0 || rep.ByDesign["copies-lost-in-jetstream-rollback"] != 1 {
		t.Fatalf("an ack before the server stopped was not in the window: %v %s", rep.ByDesign, rep.Text())
	}
	h = load(t, "lost-ack.jsonl")
	h.Faults = append(h.Faults, Record{T: "fault", Kind: "snapshot", At: 500}, Record{T: "fault", Kind: "nats-rollback", At: 900, Stopped: 1000, End: 1005})
	if rep := Check(h, 10*time.Second); rep.Counts["lost"] == 0 {
		t.Fatalf("an ack by the restored server excused its loss: %s", rep.Text())
	}
}

// A group's member snapshot is taken when the message is first stored, which may be by an
// earlier attempt than the one acknowledged: a member added between the two is not demanded.
func TestGroupCopiesAreDemandedOfMembersFromTheFirstAttempt(t *testing.T) {
	build := func(withEarlyAttempt bool) *History {
		h := load(t, "clean.jsonl")
		h.Meta.Groups = []Group{{ID: "g", Tier: "small", Admin: "alice", Members: []string{"alice", "bob"}, Churn: true}}
		addRet := 1500.0
		h.Ops = append(h.Ops, Record{T: "op", Op: "group.add", User: "alice", Dev: "alice/d0", Call: 1490, Ret: &addRet,
			Args: rawMessage(`{"group":"g","members":["carol"]}`), Res: rawMessage(`{"ok":true,"tier":"small","memberCount":3}`)})
		if withEarlyAttempt {
			h.Ops = append(h.Ops, Record{T: "op", Op: "send", User: "alice", Dev: "alice/d0", Call: 1400,
				Args: rawMessage(`{"appinfo":"g1","to":{"group":"g"}}`), Res: rawMessage(`null`)})
		}
		ret := 1610.0
		h.Ops = append(h.Ops, Record{T: "op", Op: "send", User: "alice", Dev: "alice/d0", Call: 1600, Ret: &ret,
			Args: rawMessage(`{"appinfo":"g1","to":{"group":"g"}}`), Res: rawMessage(`{"ok":true,"seq":4,"duplicate":true}`)})
		h.Finals["alice"] = append(h.Finals["alice"], Entry{Seq: 4, Kind: "msg", Appinfo: "g1", From: "alice", Conv: Conv{"group", "g"}})
		h.Finals["bob"] = append(h.Finals["bob"], Entry{Seq: 3, Kind: "msg", Appinfo: "g1", From: "alice", Conv: Conv{"group", "g"}})
		h.Hooks = append(h.Hooks, Record{T: "hook", Kind: "after_send", At: 1700, Status: 200, Signed: true, Body: rawMessage(`{"from":"alice","appinfo":"g1","seq":4}`)})
		return h
	}
	if rep := Check(build(true), 10*time.Second); rep.Counts["lost"] != 0 {
		t.Fatalf("a member added after the first attempt was demanded a copy: %s", rep.Text())
	}
	if rep := Check(build(false), 10*time.Second); rep.Counts["lost"] == 0 {
		t.Fatalf("a member throughout the send got no copy, and it passed: %s", rep.Text())
	}
}

// Round 4 of seed s40d: an add and a remove of the same member overlapped (the remove called
// before the add returned, returning after it); the server applied the remove last, and the
// checker, taking the remove as before the add, demanded the member's copies of 29 later sends.
func TestARemoveOverlappingTheLastAddMayComeAfterIt(t *testing.T) {
	build := func(removeCall float64) *History {
		h := load(t, "clean.jsonl")
		h.Meta.Groups = []Group{{ID: "g", Tier: "small", Admin: "alice", Members: []string{"alice", "bob"}, Churn: true}}
		addRet, removeRet := 1500.0, 1550.0
		h.Ops = append(h.Ops,
			Record{T: "op", Op: "group.add", User: "alice", Dev: "alice/d0", Call: 1400, Ret: &addRet,
				Args: rawMessage(`{"group":"g","members":["carol"]}`), Res: rawMessage(`{"ok":true,"tier":"small","memberCount":3}`)},
			Record{T: "op", Op: "group.remove", User: "alice", Dev: "alice/d1", Call: removeCall, Ret: &removeRet,
				Args: rawMessage(`{"group":"g","members":["carol"]}`), Res: rawMessage(`{"ok":true,"tier":"small","memberCount":2}`)})
		ret := 1610.0
		h.Ops = append(h.Ops, Record{T: "op", Op: "send", User: "alice", Dev: "alice/d0", Call: 1600, Ret: &ret,
			Args: rawMessage(`{"appinfo":"g1","to":{"group":"g"}}`), Res: rawMessage(`{"ok":true,"seq":4,"duplicate":false}`)})
		h.Finals["alice"] = append(h.Finals["alice"], Entry{Seq: 4, Kind: "msg", Appinfo: "g1", From: "alice", Conv: Conv{"group", "g"}})
		h.Finals["bob"] = append(h.Finals["bob"], Entry{Seq: 3, Kind: "msg", Appinfo: "g1", From: "alice", Conv: Conv{"group", "g"}})
		h.Hooks = append(h.Hooks, Record{T: "hook", Kind: "after_send", At: 1700, Status: 200, Signed: true, Body: rawMessage(`{"from":"alice","appinfo":"g1","seq":4}`)})
		return h
	}
	// The remove called before the add returned: either order is possible, no copy demanded of carol.
	if rep := Check(build(1450), 10*time.Second); rep.Counts["lost"] != 0 {
		t.Fatalf("a member whose remove overlapped the add was demanded a copy: %s", rep.Text())
	}
	// The remove called and returned before the add was called cannot follow it: carol's copy is demanded.
	early := build(1300)
	early.Ops[len(early.Ops)-2].Ret = func() *float64 { v := 1350.0; return &v }()
	if rep := Check(early, 10*time.Second); rep.Counts["lost"] == 0 {
		t.Fatalf("a member added after her remove got no copy, and it passed: %s", rep.Text())
	}
}
