/**
 * License policy: SPDX expressions judged as allowed (permissive, or weak copyleft that binds
 * only the library's own files), forbidden (network or strong copyleft, source-available) or
 * unknown. `A OR B` is fine when either is; `A AND B` when both are.
 */
export type Verdict = 'allowed' | 'forbidden' | 'unknown';

const ALLOWED = new Set([
  '0BSD',
  'Apache-2.0',
  'BlueOak-1.0.0',
  'BSD-2-Clause',
  'BSD-3-Clause',
  'CC-BY-3.0',
  'CC-BY-4.0',
  'CC0-1.0',
  'ISC',
  'MIT',
  'MIT-0',
  'MPL-2.0',
  'Python-2.0',
  'Unlicense',
  'WTFPL',
  'Zlib',
  'LGPL-2.1-only',
  'LGPL-2.1-or-later',
  'LGPL-3.0-only',
  'LGPL-3.0-or-later',
  'LGPL-2.1',
  'LGPL-3.0',
]);

/** Why each forbidden family is: what it would require of Seqline or its users. */
const FORBIDDEN: { pattern: RegExp; why: string }[] = [
  { pattern: /^AGPL/i, why: 'AGPL: network use obliges publishing the source of the whole program' },
  { pattern: /^SSPL/i, why: 'SSPL: offering it as a service obliges publishing the whole service stack' },
  { pattern: /^GPL/i, why: 'GPL: a program that includes it must be GPL' },
  { pattern: /^BUSL|^BSL-1\.1$/i, why: 'BUSL: source-available, production use restricted' },
  { pattern: /^RSAL|^Redis-Source-Available/i, why: 'RSALv2: source-available, no managed-service use' },
  { pattern: /^Elastic-2\.0$/i, why: 'Elastic-2.0: source-available, no managed-service use' },
  { pattern: /Commons-Clause/i, why: 'Commons Clause: no selling of the software' },
];

export function forbiddenReason(id: string): string | undefined {
  return FORBIDDEN.find((f) => f.pattern.test(id))?.why;
}

function leaf(id: string): Verdict {
  const bare = id.replace(/\+$/, '');
  if (ALLOWED.has(bare)) return 'allowed';
  if (forbiddenReason(bare)) return 'forbidden';
  return 'unknown';
}

/** Judges an SPDX expression; `WITH <exception>` keeps the verdict of its license. */
export function judge(expression: string): Verdict {
  const tokens = expression
    .replace(/[()]/g, (p) => ` ${p} `)
    .trim()
    .split(/\s+/)
    .filter(Boolean);
  let at = 0;
  const or = (): Verdict => {
    let v = and();
    while (tokens[at]?.toUpperCase() === 'OR') {
      at += 1;
      const w = and();
      v = v === 'allowed' || w === 'allowed' ? 'allowed' : v === 'unknown' || w === 'unknown' ? 'unknown' : 'forbidden';
    }
    return v;
  };
  const and = (): Verdict => {
    let v = term();
    while (tokens[at]?.toUpperCase() === 'AND') {
      at += 1;
      const w = term();
      v = v === 'forbidden' || w === 'forbidden' ? 'forbidden' : v === 'unknown' || w === 'unknown' ? 'unknown' : 'allowed';
    }
    return v;
  };
  const term = (): Verdict => {
    const t = tokens[at++];
    if (t === undefined) return 'unknown';
    let v: Verdict;
    if (t === '(') {
      v = or();
      if (tokens[at++] !== ')') return 'unknown';
    } else v = leaf(t);
    if (tokens[at]?.toUpperCase() === 'WITH') at += 2;
    return v;
  };
  const verdict = or();
  return at === tokens.length ? verdict : 'unknown';
}
