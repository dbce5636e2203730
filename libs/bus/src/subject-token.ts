/**
 * Inbox keys ("tenant:user") may hold '.', '*', '>', spaces or any Unicode, none of which may
 * appear inside one NATS subject token. base64url of the UTF-8 bytes is injective and uses only
 * [A-Za-z0-9_-], so every inbox maps to exactly one single-token subject and no two collide.
 */
export function subjectToken(key: string): string {
  return Buffer.from(key, 'utf8').toString('base64url');
}

export function fromSubjectToken(token: string): string {
  return Buffer.from(token, 'base64url').toString('utf8');
}

/** Dot-separated words of [A-Za-z0-9_-] (e.g. `fanout.small`): valid subject tokens. */
const NAME = /^[A-Za-z0-9_-]+(\.[A-Za-z0-9_-]+)*$/;

/** Queue names become subject tokens and a durable consumer name. */
export function isValidQueueName(queue: string): boolean {
  return queue.length <= 200 && NAME.test(queue);
}

/** Durable consumer names may not contain '.'; '~' never occurs in a queue name, so this is injective. */
export function durableName(queue: string): string {
  return queue.replaceAll('.', '~');
}
