// 1:1 chat over WebSocket: each VU is a user that sends to random peers and measures
// send → ack latency, and send → push latency from the send time carried in the body (all VUs
// share this machine's clock).
//   SEQLINE_SECRET=$(cat data/secret) k6 run loadtest/chat.js
//   k6 run -e VUS=500 -e DURATION=60s -e RATE=2 loadtest/chat.js
import ws from 'k6/ws';
import { check } from 'k6';
import { Counter, Trend } from 'k6/metrics';
import { config, requestTimer, token, uuid } from './lib.js';

const cfg = config();
const ackLatency = new Trend('seqline_send_ack_ms', true);
const pushLatency = new Trend('seqline_send_push_ms', true);
const errors = new Counter('seqline_errors');

export const options = {
  vus: Number(__ENV.VUS || 100),
  duration: __ENV.DURATION || '30s',
  thresholds: { seqline_errors: ['count<1'], seqline_send_ack_ms: ['p(99)<50'] },
};

export default function () {
  const me = `u${__VU}`;
  const rate = Number(__ENV.RATE || 1); // messages per second per VU
  const res = ws.connect(cfg.ws, { headers: { Authorization: `Bearer ${token(cfg.secret, me, cfg.tenant)}` } }, (socket) => {
    const requests = requestTimer(ackLatency, errors);
    socket.on('message', (data) => {
      /** @type {import('./lib.js').Frame} */
      const frame = JSON.parse(data);
      if (frame.op === 'push') {
        for (const e of frame.entries || []) {
          if (e.kind === 'msg' && e.from !== me && e.body && typeof e.body.t === 'number') pushLatency.add(Date.now() - e.body.t);
        }
        return;
      }
      requests.reply(frame);
    });
    socket.setInterval(() => {
      const peer = `u${1 + Math.floor(Math.random() * cfg.users)}`;
      requests.send(socket, { op: 'send', appinfo: uuid(), to: { user: peer }, type: 'text', body: { text: 'hello', t: Date.now() } });
    }, 1000 / rate);
    socket.setTimeout(() => socket.close(), 1000 * (Number(__ENV.SESSION_S) || 20));
  });
  check(res, { 'upgraded (101)': (r) => r && r.status === 101 });
}
