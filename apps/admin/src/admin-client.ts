/** The CLI's side of the admin HTTP API (apps/gateway/src/admin-api.ts). */
import { CliError, EXIT, ServerError, UnreachableError, UsageError } from './errors.ts';

const PREFIX = '/v1/admin/';

export class AdminClient {
  private readonly base: URL;

  constructor(
    baseUrl: string,
    private readonly token: string,
    private readonly timeoutMs: number,
  ) {
    try {
      this.base = new URL(baseUrl);
    } catch {
      throw new UsageError(`--url: "${baseUrl}" is not a URL (e.g. http://127.0.0.1:8080)`);
    }
    if (this.base.protocol !== 'http:' && this.base.protocol !== 'https:') {
      throw new UsageError(`--url: use http:// or https://, got ${this.base.protocol}`);
    }
  }

  get<T>(path: string): Promise<T> {
    return this.request<T>('GET', path);
  }

  put<T>(path: string, body: unknown): Promise<T> {
    return this.request<T>('PUT', path, body);
  }

  post<T>(path: string, body: unknown = {}): Promise<T> {
    return this.request<T>('POST', path, body);
  }

  /** `path` is relative to /v1/admin/; each caller encodes its own path segments. */
  async request<T>(method: string, path: string, body?: unknown): Promise<T> {
    const url = new URL(`${this.base.pathname.replace(/\/+$/, '')}${PREFIX}${path}`, this.base);
    let response: Response;
    try {
      response = await fetch(url, {
        method,
        headers: { authorization: `Bearer ${this.token}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
        signal: AbortSignal.timeout(this.timeoutMs),
      });
    } catch (err) {
      throw new UnreachableError(`cannot reach the server at ${this.base.origin}: ${reason(err, this.timeoutMs)}`);
    }
    const text = await response.text();
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch {
      throw new CliError(
        `unexpected answer from ${url.origin} (HTTP ${response.status}, not JSON); is --url a Seqline server?`,
        EXIT.failure,
      );
    }
    if (response.ok && isObject(parsed) && parsed['ok'] === true) {
      const { ok: _ok, ...result } = parsed;
      return result as T;
    }
    const error = isObject(parsed) && isObject(parsed['error']) ? parsed['error'] : {};
    const code = typeof error['code'] === 'string' ? error['code'] : 'UNKNOWN';
    const message = typeof error['message'] === 'string' ? error['message'] : `HTTP ${response.status}`;
    throw new ServerError(response.status, code, explain(response.status, code, message));
  }
}

/** The server's message, plus what to do about the usual causes. */
function explain(status: number, code: string, message: string): string {
  if (status === 401)
    return `${message} (401): the admin token was refused; check --data-dir / SEQLINE_SECRET match the server, or --admin-token`;
  if (status === 403) return `${message} (403): this token is not an admin token; mint one with "seqline-admin token issue --admin"`;
  if (status === 404 && message.startsWith('no route')) return `${message}: this server does not serve the admin API`;
  return `${message} (${code})`;
}

function reason(err: unknown, timeoutMs: number): string {
  if (err instanceof Error && (err.name === 'TimeoutError' || err.name === 'AbortError')) return `no answer within ${timeoutMs} ms`;
  const cause = err instanceof Error ? (err.cause as { code?: string; message?: string } | undefined) : undefined;
  return cause?.code ?? cause?.message ?? (err instanceof Error ? err.message : String(err));
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}
