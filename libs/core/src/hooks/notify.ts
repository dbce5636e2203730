/**
 * Which inbox entries make an offline notification (docs/protocol.md, "Offline notifications"),
 * stated once on top of the conversation rules: a message that counts as unread for the inbox
 * owner — a message from someone else, @-mention copies of huge groups included — and nothing
 * else (never the owner's own copies, never a control entry).
 */
import type { Entry } from '../entry.ts';
import { countsAsUnread, mentionsUser } from '../conversations/rules.ts';
import type { NotifyItem } from './types.ts';

/** Characters (code points) of a message's `text` a preview keeps. */
export const NOTIFY_PREVIEW_MAX_CHARS = 100;

/**
 * The preview of a message: the first 100 characters of its body's `text` when the body is an
 * object with a string `text`; otherwise none. Cut by code point, so a surrogate pair is never split.
 */
export function notifyPreviewOf(entry: Entry): string | undefined {
  const body = entry.body;
  if (typeof body !== 'object' || body === null || Array.isArray(body)) return undefined;
  const text = body.text;
  if (typeof text !== 'string') return undefined;
  if (text.length <= NOTIFY_PREVIEW_MAX_CHARS) return text;
  return Array.from(text).slice(0, NOTIFY_PREVIEW_MAX_CHARS).join('');
}

/**
 * The notification items of entries just appended to `owner`'s inbox, in inbox order. With
 * `preview`, each item carries its message's preview when it has one.
 */
export function notifyItemsOf(owner: string, entries: readonly Entry[], options: { preview?: boolean } = {}): NotifyItem[] {
  const items: NotifyItem[] = [];
  for (const entry of entries) {
    if (!countsAsUnread(entry, owner)) continue;
    const item: NotifyItem = {
      seq: entry.seq,
      conv: { type: entry.conv.type, id: entry.conv.id },
      from: entry.from,
      appinfo: entry.appinfo,
      mention: mentionsUser(entry, owner),
    };
    const preview = options.preview ? notifyPreviewOf(entry) : undefined;
    if (preview !== undefined) item.preview = preview;
    items.push(item);
  }
  return items;
}
