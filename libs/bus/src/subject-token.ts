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

const NAME = /^[A-Za-z0-9_-]{1,200}$/;

/** Queue names become a subject token and a durable consumer name: keep them to [A-Za-z0-9_-]. */
export function isValidQueueName(queue: string): boolean {
  return NAME.test(queue);
}
