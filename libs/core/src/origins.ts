/**
 * Browser origins a server accepts (docs/protocol.md, "Browser origins"): how a configured list
 * is read, and the form an Origin header is compared in. Both modes read their
 * `SEQLINE_ALLOWED_ORIGINS` through `readOriginList`.
 */

/** An Origin as compared: trimmed, without trailing `/`, lower-case. */
export function normaliseOrigin(origin: string): string {
  return origin.trim().replace(/\/+$/, '').toLowerCase();
}

/** What a browser sends in `Origin`: a scheme and a host with an optional port; no path, query or userinfo. */
const ORIGIN = /^[a-z][a-z0-9+.-]*:\/\/[^\s/?#@\\,]+$/;

/** `origins`: undefined when nothing is configured (the server's default applies). */
export type OriginListReading = { ok: true; origins: string[] | undefined } | { ok: false; problem: string };

/**
 * A comma-separated list of origins, or `*`. Unset or blank is "not configured", as every optional
 * setting's empty value is. A list that names no origin (`,`) or holds an entry no browser can
 * send (`localhost:8080` without a scheme, `https://app.example/chat` with a path, `null`) is a
 * problem: read as written, it would refuse every browser without a word.
 */
export function readOriginList(value: string | undefined): OriginListReading {
  if (value === undefined || value.trim() === '') return { ok: true, origins: undefined };
  const entries = value
    .split(',')
    .map((entry) => entry.trim())
    .filter((entry) => entry !== '');
  if (entries.length === 0) return { ok: false, problem: 'names no origin (leave it unset for the default, or "*" for any)' };
  const origins: string[] = [];
  for (const entry of entries) {
    const origin = entry === '*' ? entry : normaliseOrigin(entry);
    if (origin !== '*' && !ORIGIN.test(origin)) {
      return { ok: false, problem: `${JSON.stringify(entry)} is not an origin (scheme://host[:port], e.g. https://app.example.com)` };
    }
    origins.push(origin);
  }
  return { ok: true, origins };
}
