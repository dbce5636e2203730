// Group chat over WebSocket. setup() creates GROUPS groups of GROUP_SIZE members each, drawn
// from the USERS population (each created by its first member). Each VU is a user that sends at
// RATE to a random group it belongs to, and measures send → ack, and send → delivery of every
// group message it receives, by how it came: seqline_group_push_ms (a copy in its inbox, an
// inbox `push`: write-fanout, small and large groups) or seqline_group_stream_push_ms (a
// `group.push` of the group stream: read-fanout, huge groups, by default from 2 000 members;
// `seqline-admin tiers set` moves the thresholds).
//   SEQLINE_SECRET=$(cat data/secret) k6 run loadtest/group.js
//   k6 run -e GROUPS=1 -e GROUP_SIZE=2500 -e VUS=100 loadtest/group.js   # one read-fanout group
import ws from 'k6/ws';
import { check, fail } from 'k6';
import { Counter, Trend } from 'k6/metrics';
import { config, requestTimer, token, uuid } from './lib.js';

const cfg = config();
const GROUPS = Number(__ENV.GROUPS || 4);
const GROUP_SIZE = Number(__ENV.GROUP_SIZE || 50);
const ackLatency = new Trend('seqline_group_send_ack_ms', true);
const inboxPushLatency = new Trend('seqline_group_push_ms', true);
const streamPushLatency = new Trend('seqline_group_stream_push_ms', true);
const errors = new Counter('seqline_errors');

export const options = {
  vus: Number(__ENV.VUS || 50),
  duration: __ENV.DURATION || '30s',
  setupTimeout: '120s',
  thresholds: { seqline_errors: ['count<1'], seqline_group_send_ack_ms: ['p(99)<100'] },
};

/** @param {string} user */
const auth = (user) => ({ Authorization: `Bearer ${token(cfg.secret, user, cfg.tenant)}` });

/**
 * Group k: GROUP_SIZE consecutive users, wrapping around the population (past it: users no VU plays).
 * @param {number} k
 */
function membersOf(k) {
  const span = Math.max(cfg.users, GROUP_SIZE);
  const members = [];
  for (let i = 0; i < GROUP_SIZE; i++) members.push(`u${1 + ((k * GROUP_SIZE + i) % span)}`);
  return members;
}

/**
 * One request over a socket of its own; the reply frame.
 * @param {string} user
 * @param {object} frame
 * @returns {import('./lib.js').Frame | undefined}
 */
function requestOnce(user, frame) {
  /** @type {import('./lib.js').Frame | undefined} */
  let reply;
  ws.connect(cfg.ws, { headers: auth(user) }, (socket) => {
    socket.on('open', () => socket.send(JSON.stringify({ ...frame, id: 1 })));
    socket.on('message', (data) => {
      /** @type {import('./lib.js').Frame} */
      const f = JSON.parse(data);
      if (f.id === 1) {
        reply = f;
        socket.close();
      }
    });
    socket.setTimeout(() => socket.close(), 30000);
  });
  return reply;
}

/** @typedef {{ groups: { group: string, tier: string | undefined }[] }} SetupData */

/** @returns {SetupData} */
export function setup() {
  const run = `${Date.now().toString(36)}${Math.floor(Math.random() * 1e6).toString(36)}`;
  const groups = [];
  for (let k = 0; k < GROUPS; k++) {
    const members = membersOf(k);
    const group = `lt-${run}-${k}`;
    const reply = requestOnce(members[0] || 'u1', { op: 'group.create', group, name: group, members });
    if (!reply || !reply.ok)
      fail(`group.create ${group}: ${reply && reply.error ? `${reply.error.code} ${reply.error.message}` : 'no reply'}`);
    groups.push({ group, tier: reply.tier });
  }
  console.log(`groups: ${groups.map((g) => `${g.group} (${g.tier})`).join(', ')}`);
  return { groups };
}

/** @type {string[] | undefined} */
let mine; // the groups this VU's user belongs to, worked out once per VU

/** @param {SetupData} data */
export default function (data) {
  const me = `u${__VU}`;
  const groups = (mine = mine || data.groups.filter((_, k) => membersOf(k).includes(me)).map((g) => g.group));
  const rate = Number(__ENV.RATE || 1); // messages per second per VU
  const res = ws.connect(cfg.ws, { headers: auth(me) }, (socket) => {
    const requests = requestTimer(ackLatency, errors);
    /**
     * @param {import('./lib.js').Entry} entry
     * @param {Trend} trend
     */
    const delivered = (entry, trend) => {
      if (entry.kind === 'msg' && entry.from !== me && entry.body && typeof entry.body.t === 'number') trend.add(Date.now() - entry.body.t);
    };
    socket.on('message', (raw) => {
      /** @type {import('./lib.js').Frame} */
      const frame = JSON.parse(raw);
      if (frame.op === 'push') {
        for (const e of frame.entries || []) if (e.conv.type === 'group') delivered(e, inboxPushLatency);
        return;
      }
      if (frame.op === 'group.push') {
        for (const m of frame.messages || []) delivered(m, streamPushLatency);
        return;
      }
      requests.reply(frame);
    });
    if (groups.length > 0) {
      socket.setInterval(() => {
        const group = groups[Math.floor(Math.random() * groups.length)];
        requests.send(socket, { op: 'send', appinfo: uuid(), to: { group }, type: 'text', body: { text: 'hello all', t: Date.now() } });
      }, 1000 / rate);
    }
    socket.setTimeout(() => socket.close(), 1000 * (Number(__ENV.SESSION_S) || 20));
  });
  check(res, { 'upgraded (101)': (r) => r && r.status === 101 });
}
