// Catch-up load: each VU syncs its inbox from 0 by max seq over HTTP, page by page, like a
// client coming back online. Run chat.js first (or together) so inboxes have entries.
//   SEQLINE_SECRET=$(cat data/secret) k6 run loadtest/sync.js
import http from 'k6/http';
import { check } from 'k6';
import { Trend } from 'k6/metrics';
import { config, token } from './lib.js';

const cfg = config();
const pageLatency = new Trend('seqline_sync_page_ms', true);

export const options = {
  vus: Number(__ENV.VUS || 50),
  duration: __ENV.DURATION || '30s',
  thresholds: { http_req_failed: ['rate<0.01'], seqline_sync_page_ms: ['p(99)<15'] },
};

export default function () {
  const headers = { Authorization: `Bearer ${token(cfg.secret, `u${1 + ((__VU - 1) % cfg.users)}`, cfg.tenant)}` };
  let maxSeq = 0;
  for (let page = 0; page < 50; page++) {
    const started = Date.now();
    const r = http.get(`${cfg.base}/v1/sync?maxSeq=${maxSeq}&limit=200`, { headers });
    pageLatency.add(Date.now() - started);
    if (!check(r, { 'sync 200': (x) => x.status === 200 })) return;
    const body = /** @type {{ entries: { seq: number }[], hasMore: boolean }} */ (r.json());
    const last = body.entries[body.entries.length - 1];
    if (last) maxSeq = last.seq;
    if (!body.hasMore) return;
  }
}
