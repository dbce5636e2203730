/** Wire limits (docs/protocol.md). One place, so the gateway, the HTTP API and clients agree. */

/** A message body, JSON-encoded, may not exceed this many bytes (UTF-8). */
export const MAX_BODY_BYTES = 64 * 1024;

/**
 * A whole frame may be a little larger than the body limit: the envelope (id, op, appinfo,
 * to, type) travels with it. Beyond this the frame is refused with TOO_LARGE before parsing.
 */
export const MAX_FRAME_BYTES = 66 * 1024;

/** Deepest nesting accepted in a body: deeper JSON could overflow the stack when re-encoded. */
export const MAX_BODY_DEPTH = 64;

export const DEFAULT_PAGE_LIMIT = 200;
/** Larger requested limits are clamped to this (the answer's hasMore says there is more). */
export const MAX_PAGE_LIMIT = 1000;

export const MAX_APPINFO_LENGTH = 128;
export const MAX_TYPE_LENGTH = 64;
export const MAX_GROUP_NAME_LENGTH = 128;
/** Most members one group.create / add / remove frame may name. */
export const MAX_MEMBERS_PER_FRAME = 10_000;
/** Most seqs one read frame may name. */
export const MAX_READ_SEQS = 1000;
