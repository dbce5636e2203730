/**
 * The key an entry is de-duplicated under in an inbox or a group stream (I3). An appinfo is
 * unique per sender only — the SDK uses UUIDv7, but a client may count `local-1`, `local-2` —
 * so two honest users may send the same appinfo to one recipient. A client message is therefore
 * keyed by its sender and appinfo, `<from>/<appinfo>`; a server-made entry keeps its appinfo.
 *
 * The two key spaces cannot meet: user ids match ID_PATTERN (no '/' and no ':') and client
 * appinfos have no ':' (appinfo.ts), so a message key has no ':' and splits at its first '/'
 * back into sender and appinfo; every server-made appinfo has a ':'. An appinfo with a ':'
 * that a client stored before that rule keeps its appinfo as key too, as it always had.
 *
 * The entry keeps the appinfo as sent: the key exists only in the stores' dedup indexes and the
 * lookups into them.
 */
import type { EditRef, Entry, RecallRef } from './entry.ts';
import { InternalError } from './errors.ts';

export type DedupKey = string & { readonly __brand: 'DedupKey' };

/** Server-made appinfos (`recall:…`, `receipt:…`, `group:…`…) have a ':'; client ones do not. */
export function isServerShapedAppinfo(appinfo: string): boolean {
  return appinfo.includes(':');
}

/** The key of a message `appinfo` sent by `from` (or of any entry, by its sender and appinfo). */
export function messageKey(from: string, appinfo: string): DedupKey {
  return (isServerShapedAppinfo(appinfo) ? appinfo : `${from}/${appinfo}`) as DedupKey;
}

/** The key an inbox or group stream de-duplicates `entry` under. */
export function dedupKeyOf(entry: Pick<Entry, 'from' | 'appinfo'>): DedupKey {
  return messageKey(entry.from, entry.appinfo);
}

/** The key of a server-made entry, named by its appinfo (which has a ':'). */
export function serverEntryKey(appinfo: string): DedupKey {
  if (!isServerShapedAppinfo(appinfo)) throw new InternalError(`not a server-made appinfo: ${appinfo}`);
  return appinfo as DedupKey;
}

/**
 * Where the previous layout indexed the entry of `key`: by its plain appinfo. Undefined when
 * that is the key itself (a server-made entry). A row found there may belong to another
 * sender's message: it answers for `key` only when `answersFor` says so.
 */
export function legacyIndexKey(key: DedupKey): string | undefined {
  if (isServerShapedAppinfo(key)) return undefined;
  const slash = key.indexOf('/');
  return slash < 0 ? undefined : key.slice(slash + 1);
}

/**
 * Whether the stored `entry` is the one `key` names. A dedup row is believed only through this:
 * a row can outlive its entry (CQL), or be a previous layout's row, keyed by plain appinfo,
 * that another sender's message shares.
 */
export function answersFor(entry: Pick<Entry, 'from' | 'appinfo'>, key: DedupKey): boolean {
  return dedupKeyOf(entry) === key;
}

/** The key of the message a recall withdraws: its sender is `recall.from`, else the recaller (`from`). */
export function recalledKey(from: string, recall: RecallRef): DedupKey {
  return messageKey(recall.from ?? from, recall.appinfo);
}

/** The key of the message an edit changes, by the edit's author: only the sender edits a message. */
export function editedKey(from: string, edit: EditRef): DedupKey {
  return messageKey(from, edit.appinfo);
}
