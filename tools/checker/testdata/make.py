"""Writes the hand-made histories of testdata/ (python3 make.py): a clean round of three users
and copies of it each broken in one way — a lost ack, a duplicate, a seq going back, a skipped
entry, a drifted unread count, a missing after-send event. The checker must accept the first
and reject each other one for that reason (checker_test.go, apps/worker/test/campaign-checker.test.ts)."""
import json, copy
def E(seq, appinfo, frm, conv, kind='msg', **kw):
    e = {"seq": seq, "kind": kind, "appinfo": appinfo, "conv": {"type": conv[0], "id": conv[1]}, "from": frm, "sendTime": 1700000000000 + seq}
    if kind == 'msg': e.update({"type": "text", "body": {"k": appinfo}})
    e.update(kw); return e
def op(dev, o, call, ret, args, res):
    return {"t": "op", "dev": dev, "user": dev.split('/')[0], "sock": 1, "op": o, "call": call, "ret": ret, "args": args, "res": res}
def conv(cid, lastSeq, last, readSeq, unread, asOf, ctype='user', mentions=0, cleared=0):
    return {"conv": {"type": ctype, "id": cid}, "lastSeq": lastSeq, "last": last, "readSeq": readSeq, "unread": unread, "mentions": mentions, "clearedSeq": cleared, "asOfSeq": asOf}
a1_bob = E(1, 'a1', 'alice', ('user', 'alice'))
def base():
    recs = [
      {"t": "meta", "round": 1, "seed": "fixture", "mode": "embedded", "tenant": "t1", "users": ["alice", "bob"], "offline": ["carol"], "groups": [], "notifyWindowMs": 300, "hooks": True},
      op("alice/d0", "send", 1000, 1010, {"appinfo": "a1", "to": {"user": "bob"}, "type": "text", "body": {"k": "a1"}}, {"ok": True, "seq": 1, "sendTime": 1, "duplicate": False}),
      op("alice/d0", "send", 1020, 1030, {"appinfo": "a2", "to": {"user": "carol"}, "type": "text", "body": {"k": "a2"}}, {"ok": True, "seq": 2, "sendTime": 2, "duplicate": False}),
      op("bob/d0", "sync", 1040, 1050, {"maxSeq": 0, "limit": 200}, {"ok": True, "entries": [a1_bob], "headSeq": 1, "hasMore": False, "groups": []}),
      op("bob/d0", "conversations", 1060, 1070, {"limit": 50}, {"ok": True, "convs": [conv("alice", 1, a1_bob, 0, 1, 1)], "headSeq": 1, "hasMore": False}),
      op("bob/d0", "send", 1080, 1090, {"appinfo": "b1", "to": {"user": "alice"}, "type": "text", "body": {"k": "b1"}}, {"ok": True, "seq": 2, "sendTime": 3, "duplicate": False}),
      op("alice/d0", "sync", 1100, 1110, {"maxSeq": 0, "limit": 200}, {"ok": True, "entries": [E(1, 'a1', 'alice', ('user', 'bob')), E(2, 'a2', 'alice', ('user', 'carol')), E(3, 'b1', 'bob', ('user', 'bob'))], "headSeq": 3, "hasMore": False, "groups": []}),
      op("carol/poll", "sync", 1100, 1105, {"maxSeq": 0, "limit": 1000}, {"ok": True, "entries": [E(1, 'a2', 'alice', ('user', 'alice'))], "headSeq": 1, "hasMore": False}),
      {"t": "push", "dev": "bob/d0", "user": "bob", "sock": 1, "at": 1095, "frame": {"op": "push", "prevSeq": 1, "entries": [E(2, 'b1', 'bob', ('user', 'alice'))]}},
      {"t": "hook", "kind": "after_send", "at": 1200, "status": 200, "signed": True, "body": {"type": "after_send", "tenant": "t1", "from": "alice", "to": {"user": "bob"}, "appinfo": "a1", "seq": 1}},
      {"t": "hook", "kind": "after_send", "at": 1210, "status": 200, "signed": True, "body": {"type": "after_send", "tenant": "t1", "from": "alice", "to": {"user": "carol"}, "appinfo": "a2", "seq": 2}},
      {"t": "hook", "kind": "after_send", "at": 1220, "status": 200, "signed": True, "body": {"type": "after_send", "tenant": "t1", "from": "bob", "to": {"user": "alice"}, "appinfo": "b1", "seq": 2}},
      {"t": "hook", "kind": "notify", "at": 1400, "status": 200, "signed": True, "body": {"type": "notify", "tenant": "t1", "user": "carol", "badge": 1, "entries": [{"seq": 1, "conv": {"type": "user", "id": "alice"}, "from": "alice", "appinfo": "a2", "mention": False}]}},
      op("carol/poll", "sync", 1500, 1505, {"maxSeq": 1, "limit": 1000}, {"ok": True, "entries": [], "headSeq": 1, "hasMore": False}),
      {"t": "final", "user": "alice", "call": 2000, "ret": 2010, "entries": [E(1, 'a1', 'alice', ('user', 'bob')), E(2, 'a2', 'alice', ('user', 'carol')), E(3, 'b1', 'bob', ('user', 'bob'))]},
      {"t": "final", "user": "bob", "call": 2000, "ret": 2010, "entries": [a1_bob, E(2, 'b1', 'bob', ('user', 'alice'))]},
      {"t": "final", "user": "carol", "call": 2000, "ret": 2010, "entries": [E(1, 'a2', 'alice', ('user', 'alice'))]},
    ]
    return recs
def write(name, recs):
    with open(name, 'w') as f:
        for r in recs: f.write(json.dumps(r, separators=(',', ':')) + '\n')
write('clean.jsonl', base())
# lost ack: bob's copy of a1 never landed (and bob never read it)
r = base()
r = [x for x in r if not (x.get('dev') == 'bob/d0' and x.get('op') in ('sync', 'conversations'))]
for x in r:
    if x.get('t') == 'final' and x['user'] == 'bob': x['entries'] = [E(2, 'b1', 'bob', ('user', 'alice'))]
    if x.get('t') == 'push': x['frame']['prevSeq'] = 0
write('lost-ack.jsonl', r)
# duplicate: a1 stored twice in bob's inbox
r = base()
for x in r:
    if x.get('t') == 'final' and x['user'] == 'bob': x['entries'].append(E(3, 'a1', 'alice', ('user', 'alice')))
write('duplicate.jsonl', r)
# seq going back: alice's second send answered below her first
r = base()
r[1]['res']['seq'] = 5; r[2]['res']['seq'] = 3
for x in r:
    if x.get('t') == 'final' and x['user'] == 'alice': x['entries'] = [E(3, 'a2', 'alice', ('user', 'carol')), E(5, 'a1', 'alice', ('user', 'bob')), E(6, 'b1', 'bob', ('user', 'bob'))]
    if x.get('op') == 'sync' and x['user'] == 'alice': x['res']['entries'] = [E(3, 'a2', 'alice', ('user', 'carol')), E(5, 'a1', 'alice', ('user', 'bob')), E(6, 'b1', 'bob', ('user', 'bob'))]; x['res']['headSeq'] = 6
    if x.get('t') == 'hook' and x['kind'] == 'after_send' and x['body']['from'] == 'alice': x['body']['seq'] = 5 if x['body']['appinfo'] == 'a1' else 3
write('seq-back.jsonl', r)
# skipped entry: bob's first sync returned only b1's seq range past a1: a later entry below it appears
r = base()
for x in r:
    if x.get('op') == 'sync' and x['user'] == 'bob':
        x['call'], x['ret'] = 1092, 1094
        x['res']['entries'] = [E(2, 'b1', 'bob', ('user', 'alice'))]; x['res']['headSeq'] = 2
    if x.get('op') == 'conversations': x['call'], x['ret'] = 1096, 1097; x['res']['headSeq'] = 2; x['res']['convs'] = [conv("alice", 2, E(2, 'b1', 'bob', ('user', 'alice')), 2, 0, 2)]
write('skip.jsonl', r)
# drifted unread: bob's list says 2 unread where the inbox has 1
r = base()
for x in r:
    if x.get('op') == 'conversations': x['res']['convs'][0]['unread'] = 2
write('unread-drift.jsonl', r)
# missing after-send event for alice's a2
r = base()
r = [x for x in r if not (x.get('t') == 'hook' and x['kind'] == 'after_send' and x['body']['appinfo'] == 'a2')]
write('after-send-missing.jsonl', r)
