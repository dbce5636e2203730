/**
 * Tenancy: every user and group id is tenant-local on the wire. Internally an inbox or a group
 * stream is addressed by a scoped key `tenant:id`, which is what the stores see. Ids may not
 * contain ':' (the protocol validates this), so the key is unambiguous.
 */
export const ID_PATTERN = /^[A-Za-z0-9_.@-]{1,64}$/;

export type InboxKey = string & { readonly __brand: 'InboxKey' };
export type GroupKey = string & { readonly __brand: 'GroupKey' };

export function inboxKey(tenant: string, userId: string): InboxKey {
  return `${tenant}:${userId}` as InboxKey;
}

export function groupKey(tenant: string, groupId: string): GroupKey {
  return `${tenant}:${groupId}` as GroupKey;
}

/** Splits a scoped key back into tenant and local id. */
export function splitKey(key: string): { tenant: string; id: string } {
  const i = key.indexOf(':');
  if (i < 0) throw new Error(`not a scoped key: ${key}`);
  return { tenant: key.slice(0, i), id: key.slice(i + 1) };
}

/** Inbox (and group-stream) shards of a deployment unless configured: fixed for its lifetime. */
export const DEFAULT_SHARD_COUNT = 64;

/** Shard of an inbox: stable FNV-1a hash of the key, so every process agrees. */
export function shardOf(key: string, shardCount: number): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < key.length; i++) {
    h ^= key.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return (h >>> 0) % shardCount;
}
