/**
 * The lone-surrogate rule (docs/protocol.md, "Strings are well-formed Unicode"): a string that
 * holds an unpaired UTF-16 surrogate has no UTF-8 encoding, so no store, cache or bus could
 * keep it byte for byte (each would silently write U+FFFD instead). Such a frame is refused.
 */

import { hasLoneSurrogate } from '@seqline/core';

/** A JSON escape of a surrogate half (`\uD800`–`\uDFFF`), paired or not. */
const ESCAPED_SURROGATE = /\\u[dD][89a-fA-F]/;

/**
 * Whether the value parsed from this JSON text can hold an unpaired surrogate: only when the
 * text has one itself or escapes a surrogate half. Most frames have neither, and so skip the
 * walk over every string of the parsed value.
 */
export function mayHoldLoneSurrogate(jsonText: string): boolean {
  return ESCAPED_SURROGATE.test(jsonText) || hasLoneSurrogate(jsonText);
}

/**
 * The top-level field ("body", "type", …) of the first string value or object key, at any
 * depth, that holds an unpaired surrogate; null when every string is well-formed.
 * Iterative: the value may nest deeper than recursion should go (the depth check comes later).
 */
export function fieldWithLoneSurrogate(fields: object): string | null {
  for (const [field, value] of Object.entries(fields)) {
    if (hasLoneSurrogate(field) || holdsLoneSurrogate(value)) return field;
  }
  return null;
}

function holdsLoneSurrogate(root: unknown): boolean {
  const stack: unknown[] = [root];
  while (stack.length > 0) {
    const value = stack.pop();
    if (typeof value === 'string') {
      if (hasLoneSurrogate(value)) return true;
    } else if (Array.isArray(value)) {
      for (const item of value) stack.push(item);
    } else if (typeof value === 'object' && value !== null) {
      for (const [key, item] of Object.entries(value)) {
        if (hasLoneSurrogate(key)) return true;
        stack.push(item);
      }
    }
  }
  return false;
}
