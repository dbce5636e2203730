/** `{"op": "kicked", "by": {"dev"?, "plat"?}}`: a newer login of this user replaced this session. */

/** The device of the login that replaced this session, as the server named it. */
export interface KickedBy {
  dev?: string;
  plat?: string;
}

export interface KickedFrame {
  kind: 'kicked';
  by: KickedBy;
}

/** The close code that follows a `kicked` frame: the client does not reconnect after it. */
export const KICKED_CLOSE_CODE = 4409;

/** The frame's `by`, keeping only string fields; null when `by` is not an object. */
export function parseKicked(frame: Record<string, unknown>): KickedFrame | null {
  const by = frame['by'];
  if (typeof by !== 'object' || by === null || Array.isArray(by)) return null;
  const { dev, plat } = by as Record<string, unknown>;
  return { kind: 'kicked', by: { ...(typeof dev === 'string' ? { dev } : {}), ...(typeof plat === 'string' ? { plat } : {}) } };
}
