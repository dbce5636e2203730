/**
 * fast-check arbitraries of message bodies an attacker would send: any JSON, biased towards
 * what a store or codec tends to get wrong — keys "__proto__", "constructor", "prototype";
 * numbers at the edges of a double (and -0, which JSON prints as 0); strings with NUL, BOM,
 * U+2028, astral characters; nesting right up to the protocol's depth limit. Strings here are
 * well-formed: `withLoneSurrogate` plants the one thing the protocol refuses.
 */
import fc from 'fast-check';
import { MAX_BODY_DEPTH } from '@seqline/protocol';

export type JsonValue = null | boolean | number | string | JsonValue[] | { [key: string]: JsonValue };

const PROTOTYPE_KEYS = ['__proto__', 'constructor', 'prototype', 'toString', 'valueOf', 'hasOwnProperty', '__defineGetter__', 'toJSON'];

const EDGE_NUMBERS = [
  -0,
  0,
  1,
  -1,
  0.1,
  1e21,
  1e-7,
  -1e-7,
  2 ** 53,
  2 ** 53 + 2,
  Number.MAX_SAFE_INTEGER,
  Number.MIN_SAFE_INTEGER,
  Number.MAX_VALUE,
  -Number.MAX_VALUE,
  Number.MIN_VALUE,
  -Number.MIN_VALUE,
  2 ** 31,
  -(2 ** 31),
  2 ** 32,
  2 ** 64,
  1.5e-323,
];

const AWKWARD_STRINGS = ['', '\u0000', '\uFEFF', '\u2028\u2029', '\uD83D\uDE00', '\uFFFD', '\uFFFF', '"\\/', '\u00e9\u0301', '\r\n\t'];

export const hostileKey: fc.Arbitrary<string> = fc.oneof(
  fc.constantFrom(...PROTOTYPE_KEYS, '', '0', '-0', '1e3', '00', '4294967295'),
  fc.string({ unit: 'binary', maxLength: 8 }),
);

export const edgeNumber: fc.Arbitrary<number> = fc.oneof(
  fc.constantFrom(...EDGE_NUMBERS),
  fc.double({ noNaN: true, noDefaultInfinity: true }),
  fc.integer(),
);

export const wellFormedString: fc.Arbitrary<string> = fc.oneof(
  fc.constantFrom(...AWKWARD_STRINGS),
  fc.string({ unit: 'binary', maxLength: 24 }),
  fc.string({ unit: 'grapheme', maxLength: 8 }),
);

/** An object literal would make "__proto__" a prototype; a parsed frame has it as an own key. */
function objectOf(entries: [string, JsonValue][]): { [key: string]: JsonValue } {
  const object: { [key: string]: JsonValue } = {};
  for (const [key, value] of entries) Object.defineProperty(object, key, { value, enumerable: true, writable: true, configurable: true });
  return object;
}

const { value: shallowJson } = fc.letrec<{ value: JsonValue; array: JsonValue[]; object: { [key: string]: JsonValue } }>((tie) => ({
  value: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    fc.constant(null),
    fc.boolean(),
    edgeNumber,
    wellFormedString,
    tie('array'),
    tie('object'),
  ),
  array: fc.array(tie('value'), { maxLength: 4 }),
  object: fc.uniqueArray(fc.tuple(hostileKey, tie('value')), { maxLength: 4, selector: ([key]) => key }).map(objectOf),
}));

/** Wraps `leaf` in `depth` containers, arrays and objects with hostile keys by turns. */
export function nested(leaf: JsonValue, depth: number, keys: readonly string[] = PROTOTYPE_KEYS): JsonValue {
  let value = leaf;
  for (let level = depth; level > 0; level--) {
    const key = keys[level % keys.length] ?? 'k';
    value =
      level % 2 === 0
        ? [value]
        : objectOf([
            [key, value],
            ['at', level],
          ]);
  }
  return value;
}

/** Any JSON body the protocol accepts: shallow and varied, or nested up to MAX_BODY_DEPTH containers. */
export const hostileBody: fc.Arbitrary<JsonValue> = fc.oneof(
  { weight: 4, arbitrary: shallowJson },
  {
    weight: 1,
    arbitrary: fc
      .tuple(fc.oneof(fc.constant(null), edgeNumber, wellFormedString), fc.integer({ min: MAX_BODY_DEPTH - 4, max: MAX_BODY_DEPTH }))
      .map(([leaf, depth]) => nested(leaf, depth)),
  },
);

/** A `type`: 1–64 UTF-16 units, any well-formed characters. */
export const hostileType: fc.Arbitrary<string> = fc.oneof(
  fc.constantFrom('text', '__proto__', 'constructor', '\uD83D\uDE00', '\u0000', ' '),
  fc.string({ unit: 'binary', minLength: 1, maxLength: 32 }),
);

/** An unpaired surrogate, with ASCII around it (nothing can pair it up). */
export const loneSurrogate: fc.Arbitrary<string> = fc
  .tuple(fc.string({ maxLength: 3 }), fc.integer({ min: 0xd800, max: 0xdfff }), fc.string({ maxLength: 3 }))
  .map(([before, unit, after]) => `${before}${String.fromCharCode(unit)}${after}`);

/**
 * `body` with an unpaired surrogate planted at a chosen place: as a value or as a key, inside
 * the body or wrapped around it, anywhere in the tree.
 */
export const withLoneSurrogate: fc.Arbitrary<JsonValue> = fc
  .tuple(shallowJson, loneSurrogate, fc.nat(), fc.constantFrom('value', 'key', 'wrap-key', 'wrap-value'))
  .map(([body, bad, pick, where]) => {
    if (where === 'wrap-key')
      return objectOf([
        ['ok', body],
        [bad, 1],
      ]);
    if (where === 'wrap-value') return [body, nested(bad, pick % 8)];
    return plant(body, bad, pick, where);
  });

function plant(generated: JsonValue, bad: string, pick: number, where: 'value' | 'key'): JsonValue {
  // A copy: fast-check reuses generated values while shrinking (JSON.parse keeps "__proto__" own).
  const body = JSON.parse(JSON.stringify(generated)) as JsonValue;
  const containers: Array<JsonValue[] | { [key: string]: JsonValue }> = [];
  const stack: JsonValue[] = [body];
  for (let value = stack.pop(); value !== undefined; value = stack.pop()) {
    if (typeof value !== 'object' || value === null) continue;
    containers.push(value);
    stack.push(...Object.values(value));
  }
  const target = containers[pick % Math.max(containers.length, 1)];
  if (target === undefined) return where === 'key' ? objectOf([[bad, body]]) : bad;
  if (Array.isArray(target)) target.push(bad);
  else
    Object.defineProperty(target, where === 'key' ? bad : `k${pick}`, {
      value: where === 'key' ? pick : bad,
      enumerable: true,
      writable: true,
      configurable: true,
    });
  return body;
}
