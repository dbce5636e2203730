package main

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/anishathalye/porcupine"
)

func rawMessage(s string) json.RawMessage { return json.RawMessage(s) }

func appendOp(call, ret int64, seq int64, key string, fresh bool) porcupine.Operation {
	return porcupine.Operation{Input: &logInput{kind: inAppend, fresh: fresh, rec: rec{seq: seq, key: key, activity: 1, conv: "user:x"}}, Call: call, Return: ret}
}

func readOp(call, ret int64, from int64, hasMore bool, entries ...rec) porcupine.Operation {
	in := &logInput{kind: inRead, maxSeq: from, hasMore: hasMore, entries: entries}
	return porcupine.Operation{Input: in, Call: call, Return: ret}
}

func msg(seq int64, key string) rec { return rec{seq: seq, key: key, activity: 1, conv: "user:x"} }

func linearizable(ops ...porcupine.Operation) bool {
	return porcupine.CheckOperations(logModel.ToModel(), ops)
}

func TestAReadShowsAgainWhatAnEarlierReadShowed(t *testing.T) {
	if !linearizable(appendOp(0, 10, 5, "a/1", true), readOp(20, 30, 0, false, msg(5, "a/1"))) {
		t.Fatal("ack then read rejected")
	}
	if linearizable(readOp(0, 10, 0, false, msg(5, "a/1")), readOp(20, 30, 0, false)) {
		t.Fatal("a read that no longer shows what an earlier read showed was accepted")
	}
	// Read-after-ack is the direct check's (invisibleAcks): the model lets the read come first.
	if !linearizable(appendOp(0, 10, 5, "a/1", true), readOp(20, 30, 0, false)) {
		t.Fatal("the model should leave read-after-ack to the direct check")
	}
}

func TestAReadBegunAfterAnAckMustShowIt(t *testing.T) {
	h := load(t, "clean.jsonl")
	// bob's sync begins after his own send of b1 was acknowledged (seq 2) and does not return it.
	ret := 1500.0
	args := rawMessage(`{"maxSeq":1,"limit":200}`)
	res := rawMessage(`{"ok":true,"entries":[],"headSeq":2,"hasMore":false}`)
	h.Ops = append(h.Ops, Record{T: "op", Dev: "bob/d0", User: "bob", Op: "sync", Call: 1400, Ret: &ret, Args: args, Res: res})
	rep := Check(h, 10*time.Second)
	if rep.Counts["skip"] != 1 {
		t.Fatalf("an acknowledged entry a later sync did not return passed: %s", rep.Text())
	}
}

func TestHiddenWritersMayLandAnywhereNotYetCovered(t *testing.T) {
	// Another sender's copy (3) and our own send (5): the copy is first read after the ack.
	if !linearizable(appendOp(0, 10, 5, "a/1", true), readOp(20, 30, 0, false, msg(3, "b/1"), msg(5, "a/1"))) {
		t.Fatal("a hidden write below an ack rejected")
	}
	// But not below what a read already covered.
	if linearizable(readOp(0, 10, 0, false, msg(5, "a/1")), readOp(20, 30, 0, false, msg(3, "b/1"), msg(5, "a/1"))) {
		t.Fatal("an entry appearing below a covered range was accepted")
	}
}

func TestResendsAnswerTheOriginalSeq(t *testing.T) {
	if !linearizable(appendOp(0, 10, 5, "a/1", true), appendOp(20, 30, 5, "a/1", false)) {
		t.Fatal("a duplicate answer rejected")
	}
	if linearizable(appendOp(0, 10, 5, "a/1", true), appendOp(20, 30, 7, "a/1", false)) {
		t.Fatal("a resend stored again was accepted")
	}
	if linearizable(appendOp(0, 10, 5, "a/1", true), appendOp(20, 30, 5, "a/2", true)) {
		t.Fatal("a seq handed out twice was accepted")
	}
}

func TestDeletesHideAndUnansweredDeletesMayHaveHappened(t *testing.T) {
	del := &logInput{kind: inAppend, fresh: true, rec: rec{seq: 6, key: "delete:me:", prefix: true}, hideSeqs: []int64{5}}
	ops := []porcupine.Operation{
		appendOp(0, 10, 5, "a/1", true),
		{Input: del, Call: 20, Return: 30},
		readOp(40, 50, 0, false, rec{seq: 6, key: "delete:me:x1"}),
	}
	if !linearizable(ops...) {
		t.Fatal("a sync that leaves out a deleted entry rejected")
	}
	ops[2] = readOp(40, 50, 0, false, msg(5, "a/1"), rec{seq: 6, key: "delete:me:x1"})
	if linearizable(ops...) {
		t.Fatal("a deleted entry returned after its delete was accepted")
	}
	// The delete's answer never came: both worlds are possible.
	hide := &logInput{kind: inHide, hideSeqs: []int64{5}}
	for _, read := range []porcupine.Operation{readOp(40, 50, 0, false), readOp(40, 50, 0, false, msg(5, "a/1"))} {
		if !linearizable(appendOp(0, 10, 5, "a/1", true), porcupine.Operation{Input: hide, Call: 20, Return: 1000}, read) {
			t.Fatal("an unanswered delete must allow both outcomes")
		}
	}
}

func TestFinalReadMustHoldEveryAcknowledgedMessage(t *testing.T) {
	final := &logInput{kind: inRead, raw: true, entries: []rec{msg(5, "a/1")}, mustContain: []string{"a/1", "b/9"}}
	if linearizable(appendOp(0, 10, 5, "a/1", true), porcupine.Operation{Input: final, Call: 100, Return: 110}) {
		t.Fatal("a final log missing an acknowledged message was accepted")
	}
	final.mustContain = []string{"a/1"}
	if !linearizable(appendOp(0, 10, 5, "a/1", true), porcupine.Operation{Input: final, Call: 100, Return: 110}) {
		t.Fatal("a complete final log rejected")
	}
}

func TestReadsMustIncrease(t *testing.T) {
	if linearizable(readOp(0, 10, 0, false, msg(5, "a/1"), msg(4, "a/2"))) {
		t.Fatal("a read going back was accepted")
	}
	if linearizable(readOp(0, 10, 5, false, msg(5, "a/1"))) {
		t.Fatal("a read returning its own maxSeq was accepted")
	}
}

func TestStateSharingKeepsStatesApart(t *testing.T) {
	s := newLogState()
	for i := int64(1); i <= 200; i++ {
		s = applyInput(s, &logInput{kind: inAppend, rec: msg(i*2, "k/"+string(rune('a'+i%26))+itoa(i))})
	}
	t1 := applyInput(s, &logInput{kind: inAppend, rec: msg(101, "x/1")})
	t2 := applyInput(s, &logInput{kind: inAppend, rec: msg(103, "x/1")})
	if _, ok := s.get(101); ok {
		t.Fatal("a step changed the state it started from")
	}
	if t1.equal(t2) || t1.fullHash() == t2.fullHash() && t1.equal(t2) {
		t.Fatal("different states compare equal")
	}
	if seq, _ := t2.seqOfKey("x/1"); seq != 103 {
		t.Fatalf("key index: %d", seq)
	}
	var n int
	t1.each(0, 1<<62, func(r rec) bool { n++; return true })
	if n != 201 {
		t.Fatalf("%d entries", n)
	}
}

func itoa(i int64) string {
	if i == 0 {
		return "0"
	}
	var b []byte
	for ; i > 0; i /= 10 {
		b = append([]byte{byte('0' + i%10)}, b...)
	}
	return string(b)
}
