/**
 * k6/http: blocking requests (the host thread does them with fetch), with k6's http_reqs,
 * http_req_duration and http_req_failed metrics. Bodies are text; an object body is sent
 * form-encoded as k6 does.
 */
import type { HostEvent, Tags } from '../protocol.ts';
import { parseDuration } from '../options.ts';
import { runtime } from '../vu/runtime.ts';

type Body = string | Record<string, string | number | boolean> | null | undefined;
export interface Params {
  headers?: Record<string, string>;
  tags?: Tags;
  timeout?: string | number;
}

export class Response {
  readonly timings: { duration: number };
  readonly request: { method: string; url: string };

  constructor(
    readonly url: string,
    method: string,
    readonly status: number,
    readonly headers: Record<string, string>,
    readonly body: string,
    readonly error: string,
    durationMs: number,
  ) {
    this.timings = { duration: durationMs };
    this.request = { method, url };
  }

  /** k6's network error codes start at 1000; 0 when the request got an answer. */
  get error_code(): number {
    return this.error ? 1000 : 0;
  }

  json(selector?: string): unknown {
    if (selector !== undefined) throw new Error('Response.json(selector): selectors are not implemented by k6-lite');
    return JSON.parse(this.body);
  }
}

function encodeBody(body: Body, headers: Record<string, string>): string | null {
  if (body === null || body === undefined) return null;
  if (typeof body === 'string') return body;
  if (!Object.keys(headers).some((h) => h.toLowerCase() === 'content-type')) headers['Content-Type'] = 'application/x-www-form-urlencoded';
  return new URLSearchParams(Object.entries(body).map(([k, v]): [string, string] => [k, String(v)])).toString();
}

export function request(method: string, url: string, body?: Body, params?: Params | null): Response {
  if (runtime.phase === 'init') throw new Error(`http.${method.toLowerCase()}: not available in the init context`);
  const headers = { ...params?.headers };
  const rid = runtime.id();
  const timeoutMs = params?.timeout === undefined ? 60_000 : parseDuration(params.timeout, 'timeout');
  runtime.post({ t: 'http', rid, method: method.toUpperCase(), url, headers, body: encodeBody(body, headers), timeoutMs });
  const done = runtime.take((e): e is Extract<HostEvent, { t: 'http.done' }> => e.t === 'http.done' && e.rid === rid);
  if (!done) throw new Error(`http: no answer for ${method} ${url}`);
  const expected = done.status >= 200 && done.status < 400;
  const tags: Tags = {
    method: method.toUpperCase(),
    url,
    name: url,
    status: String(done.status),
    expected_response: String(expected),
    ...params?.tags,
  };
  if (done.error) tags.error = done.error;
  runtime.emit('http_reqs', 'counter', 'default', 1, tags);
  runtime.emit('http_req_duration', 'trend', 'time', done.durationMs, tags);
  runtime.emit('http_req_failed', 'rate', 'default', expected ? 0 : 1, tags);
  if (done.error) runtime.log('WARN', `request failed: ${method} ${url}: ${done.error}`);
  return new Response(url, method.toUpperCase(), done.status, done.headers, done.body, done.error, done.durationMs);
}

export const get = (url: string, params?: Params | null) => request('GET', url, null, params);
export const head = (url: string, params?: Params | null) => request('HEAD', url, null, params);
export const post = (url: string, body?: Body, params?: Params | null) => request('POST', url, body, params);
export const put = (url: string, body?: Body, params?: Params | null) => request('PUT', url, body, params);
export const patch = (url: string, body?: Body, params?: Params | null) => request('PATCH', url, body, params);
export const del = (url: string, body?: Body, params?: Params | null) => request('DELETE', url, body, params);
export const options = (url: string, body?: Body, params?: Params | null) => request('OPTIONS', url, body, params);

export default { request, get, head, post, put, patch, del, options };
