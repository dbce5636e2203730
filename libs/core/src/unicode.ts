/**
 * Unpaired UTF-16 surrogates: a string holding one has no UTF-8 encoding, so no store, cache or
 * bus keeps it byte for byte (each writes U+FFFD instead). The one test for it, used by the
 * protocol edge and by every store adapter.
 */

/** In a `u` regex a surrogate pair is one code point: only an unpaired half matches \p{Cs}. */
const LONE_SURROGATE = /\p{Cs}/u;

export function hasLoneSurrogate(text: string): boolean {
  return LONE_SURROGATE.test(text);
}
