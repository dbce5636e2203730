/** Which browser pages may call the gateway: the `Origin` rule of the upgrade and the HTTP API. */
import { normaliseOrigin } from '@seqline/core';

/**
 * The browser origins a gateway accepts (requests with an `Origin` header). A list: those
 * origins ("*" in it: any). `'same-origin'`: only a page served by this server, i.e. an Origin
 * naming the host and port of the request's own `Host`. Undefined: any origin — tokens are never
 * ambient (no cookies), so a foreign page cannot ride on a user's session.
 */
export type AllowedOrigins = string[] | 'same-origin' | undefined;

export interface OriginPolicy {
  /** True when a request with this Origin header value, sent to this Host, may proceed. */
  allows(origin: string, host: string | undefined): boolean;
}

export function originPolicy(allowedOrigins: AllowedOrigins): OriginPolicy {
  if (allowedOrigins === 'same-origin') return { allows: (origin, host) => isSameOrigin(origin, host) };
  if (allowedOrigins === undefined || allowedOrigins.includes('*')) return { allows: () => true };
  const allowed = new Set(allowedOrigins.map(normaliseOrigin));
  return { allows: (origin) => allowed.has(normaliseOrigin(origin)) };
}

/** A Host header as the URL parser reads it (127.1 → 127.0.0.1); undefined unless a plain host[:port]. */
export function parseHost(host: string | undefined): URL | undefined {
  // Userinfo, a path or a query would make the parser read another host than a proxy would.
  if (host === undefined || host === '' || /[/@?#\\\s]/.test(host)) return undefined;
  try {
    return new URL(`http://${host}`);
  } catch {
    return undefined;
  }
}

/** A browser's Origin (`scheme://host[:port]`, nothing more, http or https) naming the same host and port as Host. */
export function isSameOrigin(origin: string, host: string | undefined): boolean {
  const expected = parseHost(host)?.host;
  if (expected === undefined) return false;
  let url: URL;
  try {
    url = new URL(origin);
  } catch {
    return false;
  }
  return (url.protocol === 'http:' || url.protocol === 'https:') && url.origin === origin.toLowerCase() && url.host === expected;
}
