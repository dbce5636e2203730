// Shared k6 helpers: HS256 tokens signed in the script (same secret as the server) and the
// v1 frame format. k6 runs plain JavaScript (goja), not Node.
import crypto from 'k6/crypto';
import encoding from 'k6/encoding';

/**
 * The v1 frames these scripts read (docs/protocol.md has the rest).
 * @typedef {{ kind: string, from?: string, appinfo?: string, seq: number, conv: { type: string }, body?: { t?: unknown } }} Entry
 * @typedef {{ id?: number, op?: string, ok?: boolean, error?: { code: string, message: string }, tier?: string,
 *   entries?: Entry[], messages?: Entry[] }} Frame
 * @typedef {{ add(value: number, tags?: { [name: string]: string }): void }} Metric a k6 Trend or Counter
 * @typedef {{ send(data: string): void }} Sender a k6/ws socket
 */

/** @param {string} s */
const b64 = (s) => encoding.b64encode(s, 'rawurl');

/**
 * @param {string} secret
 * @param {string} user
 */
export function token(secret, user, tenant = 'loadtest', ttlSeconds = 3600) {
  const now = Math.floor(Date.now() / 1000);
  const head = b64(JSON.stringify({ alg: 'HS256', typ: 'JWT' }));
  const body = b64(JSON.stringify({ sub: user, tid: tenant, iat: now, exp: now + ttlSeconds }));
  const sig = crypto.hmac('sha256', secret, `${head}.${body}`, 'base64rawurl');
  return `${head}.${body}.${sig}`;
}

export function uuid() {
  // Unique per VU and iteration; the server only needs uniqueness, not a UUID layout.
  return `${__VU}-${__ITER}-${Date.now()}-${Math.floor(Math.random() * 1e9)}`;
}

export function config() {
  const secret = __ENV.SEQLINE_SECRET;
  if (!secret) throw new Error('set SEQLINE_SECRET to the server secret (seqline data dir: ./data/secret)');
  return {
    secret,
    base: __ENV.SEQLINE_URL || 'http://127.0.0.1:8080',
    ws: (__ENV.SEQLINE_URL || 'http://127.0.0.1:8080').replace(/^http/, 'ws') + '/v1/ws',
    users: Number(__ENV.USERS || 200),
    // Tokens carry this tenant; a distinct one per run keeps its users' inboxes apart from
    // earlier runs' on a shared store.
    tenant: __ENV.TENANT || 'loadtest',
  };
}

/**
 * Requests over one socket, timed from send to reply: `send` numbers a frame and sends it;
 * `reply` takes an incoming frame, and for the answer to a request it adds its latency to
 * `ackTrend` (or counts an error by code).
 */
/**
 * @param {Metric} ackTrend
 * @param {Metric} errors
 */
export function requestTimer(ackTrend, errors) {
  let id = 0;
  /** @type {{ [id: number]: number }} */
  const pending = {};
  return {
    /**
     * @param {Sender} socket
     * @param {object} frame
     */
    send(socket, frame) {
      id += 1;
      pending[id] = Date.now();
      socket.send(JSON.stringify(Object.assign({ id }, frame)));
    },
    /** @param {Frame} frame */
    reply(frame) {
      if (frame.id === undefined) return;
      const started = pending[frame.id];
      if (started === undefined) return;
      delete pending[frame.id];
      if (!frame.ok) errors.add(1, { code: frame.error ? frame.error.code : 'NO_ERROR_OBJECT' });
      else ackTrend.add(Date.now() - started);
    },
  };
}
