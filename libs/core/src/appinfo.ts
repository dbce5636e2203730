/**
 * Appinfo ownership. An inbox de-duplicates by appinfo (I3), so the appinfo is also a claim:
 * whoever stores it first in an inbox owns it there. Two rules keep that claim from being
 * abused (docs/security.md):
 * - client appinfos never contain ':', and every id the server makes for its own entries
 *   (`recall:…`, `receipt:…`, `group:…`, `tick:…`, `read:…`: server-ids.ts) does, so a client can neither
 *   forge a server entry nor squat the id of one to suppress it;
 * - a send that meets its appinfo already stored is a resend only when the stored entry is
 *   the same sender's message to the same conversation; anything else is refused.
 */
import type { Conv, Entry } from './entry.ts';
import { ForbiddenError } from './errors.ts';

export const MAX_CLIENT_APPINFO_LENGTH = 128;

/**
 * A client-chosen appinfo: no ':' (reserved for server-made ids), no control characters and no
 * unpaired surrogates (they cannot be stored as UTF-8, so two would read back the same).
 */
export const CLIENT_APPINFO_PATTERN = /^[^:\p{Cc}\p{Cs}]+$/u;

export function isClientAppinfo(appinfo: string): boolean {
  return appinfo.length > 0 && appinfo.length <= MAX_CLIENT_APPINFO_LENGTH && CLIENT_APPINFO_PATTERN.test(appinfo);
}

/** The appinfo is held in the sender's inbox by another message: choose a new one. */
export class AppinfoTakenError extends ForbiddenError {
  constructor(appinfo: string) {
    super(`appinfo ${JSON.stringify(appinfo)} is already used by another message in your inbox; resend with a new appinfo`);
  }
}

/**
 * Called when a send's append found its appinfo already stored in the sender's inbox. Passes
 * only a true resend: a `msg` the same sender sent to the same conversation. Anything else —
 * a message received from someone else, a server entry, the sender's own message to another
 * destination — throws, before anything is delivered.
 */
export function checkResend(stored: Entry, sender: string, conv: Conv): void {
  const same = stored.kind === 'msg' && stored.from === sender && stored.conv.type === conv.type && stored.conv.id === conv.id;
  if (!same) throw new AppinfoTakenError(stored.appinfo);
}

/**
 * Ids the server makes (group ids when a client names none) are UUIDv7. A client may not choose
 * an id of that form, so a client-chosen id can never take one the server will hand out.
 */
export const SERVER_ID_PATTERN = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/i;

export function isServerMadeId(id: string): boolean {
  return SERVER_ID_PATTERN.test(id);
}
