/**
 * What every seq log (LMDB and CQL alike) accepts for storage: one rule set, so an entry one
 * store keeps is never one the other refuses. Runs for every appended entry, before anything is
 * written; the protocol edge has its own, stricter client rules (appinfo.ts, protocol schemas).
 */
import { dedupKeyOf } from './dedup-key.ts';
import { ENTRY_KINDS, type Entry } from './entry.ts';
import { BadRequestError, InternalError } from './errors.ts';
import { hasLoneSurrogate } from './unicode.ts';

/**
 * Longest stored appinfo in UTF-8 bytes. The embedded engine puts it in an LMDB key (keys are
 * limited to about 2 KB, and a key holds the stream too); CQL keeps the same bound so both
 * stores hold the same appinfos. Server-made appinfos (server-ids.ts) stay below it for the
 * longest client appinfo (server-ids.test.ts checks it).
 */
export const MAX_STORED_APPINFO_BYTES = 512;

/**
 * Whether an appinfo can be stored, and so ever be found by a lookup. One with an unpaired
 * surrogate cannot: it has no UTF-8 form (stores write U+FFFD instead, so "a\uD800" would find
 * "a\uFFFD").
 */
export function isStorableAppinfo(appinfo: string): boolean {
  if (appinfo.length === 0 || hasLoneSurrogate(appinfo)) return false;
  // A UTF-16 code unit is at most 3 UTF-8 bytes: most appinfos fit without being measured.
  return appinfo.length * 3 <= MAX_STORED_APPINFO_BYTES || utf8Length(appinfo) <= MAX_STORED_APPINFO_BYTES;
}

/**
 * Longest dedup key of a storable entry in UTF-8 bytes: its appinfo behind the sender's id (at
 * most 64 characters, ID_PATTERN) and a '/' (dedup-key.ts).
 */
export const MAX_DEDUP_KEY_BYTES = MAX_STORED_APPINFO_BYTES + 65;

/** Whether a dedup key can be stored, and so ever be found by a lookup (see isStorableAppinfo). */
export function isStorableKey(key: string): boolean {
  if (key.length === 0 || hasLoneSurrogate(key)) return false;
  return key.length * 3 <= MAX_DEDUP_KEY_BYTES || utf8Length(key) <= MAX_DEDUP_KEY_BYTES;
}

/**
 * Throws unless `entry` can be stored and read back exactly as given:
 * - seq: a safe integer in [1, MAX_SAFE_INTEGER): seqs are allocated by the server, so a bad
 *   one is a bug (InternalError); the top value is the embedded engine's range-scan bound;
 * - appinfo: isStorableAppinfo (BadRequestError);
 * - from: a non-empty string without '/' or ':' that fits a dedup key (BadRequestError): a
 *   message's key is `<from>/<appinfo>`, which must split back into the two and never take a
 *   server appinfo's ':' (dedup-key.ts); user ids (ID_PATTERN) always qualify;
 * - kind: one of ENTRY_KINDS, since a reader refuses any other and one such row would fail
 *   every read of its page (BadRequestError);
 * - sendTime, referSeq, recall.sendTime, seqs[]: safe integers other than -0 (BadRequestError):
 *   JSON turns NaN and Infinity into null and -0 into 0, and CQL bigints hold no fractions, so
 *   they would not read back.
 */
export function assertStorableEntry(stream: string, entry: Entry): void {
  if (!Number.isSafeInteger(entry.seq) || entry.seq < 1 || entry.seq >= Number.MAX_SAFE_INTEGER) {
    throw new InternalError(`invalid seq ${String(entry.seq)} for ${stream}`);
  }
  if (typeof entry.appinfo !== 'string' || entry.appinfo.length === 0) throw new BadRequestError('entry without appinfo');
  if (hasLoneSurrogate(entry.appinfo)) throw new BadRequestError('appinfo holds an unpaired UTF-16 surrogate');
  if (!isStorableAppinfo(entry.appinfo)) throw new BadRequestError(`appinfo longer than ${MAX_STORED_APPINFO_BYTES} UTF-8 bytes`);
  if (typeof entry.from !== 'string' || entry.from.length === 0 || entry.from.includes('/') || entry.from.includes(':')) {
    throw new BadRequestError(`invalid sender ${JSON.stringify(entry.from)}`);
  }
  if (!isStorableKey(dedupKeyOf(entry))) throw new BadRequestError(`sender and appinfo longer than ${MAX_DEDUP_KEY_BYTES} UTF-8 bytes`);
  if (!ENTRY_KINDS.includes(entry.kind)) throw new BadRequestError(`unknown entry kind ${String(entry.kind)}`);
  // Field by field, not through an array of pairs: this runs for every entry appended.
  assertInteger('sendTime', entry.sendTime);
  if (entry.referSeq !== undefined) assertInteger('referSeq', entry.referSeq);
  if (entry.recall !== undefined) assertInteger('recall.sendTime', entry.recall.sendTime);
  if (entry.seqs !== undefined) for (const seq of entry.seqs) assertInteger('seqs[]', seq);
}

function assertInteger(field: string, value: number): void {
  // String(-0) is "0": name it, or the refusal would read "must be an integer, got 0".
  if (Object.is(value, -0)) throw new BadRequestError(`${field} must be an integer other than -0`);
  if (!Number.isSafeInteger(value)) throw new BadRequestError(`${field} must be an integer, got ${String(value)}`);
}

/** UTF-8 size of a string without unpaired surrogates (no Buffer: core also runs in browsers). */
function utf8Length(text: string): number {
  let bytes = 0;
  for (let i = 0; i < text.length; i++) {
    const unit = text.charCodeAt(i);
    // Each half of a surrogate pair counts 2: the pair is one 4-byte code point.
    bytes += unit < 0x80 ? 1 : unit < 0x800 || (unit >= 0xd800 && unit <= 0xdfff) ? 2 : 3;
  }
  return bytes;
}
