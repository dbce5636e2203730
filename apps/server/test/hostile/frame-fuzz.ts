/**
 * Random frames for the fuzz run: garbage text, JSON that is not an object, objects with
 * unknown ops, and ops with mangled arguments (the last the most, since they reach furthest).
 * Seeded, so a failure names a frame that can be replayed.
 */
import fc from 'fast-check';

export const OPS = [
  'send',
  'sync',
  'history',
  'read',
  'recall',
  'auth',
  'group.create',
  'group.add',
  'group.remove',
  'group.rename',
  'group.info',
  'group.history',
  'group.ack',
  'group.readers',
];

/** The fuzzing users' small world: they address each other, never a user outside it. */
const USERS = ['fz1', 'fz2', 'fz3'];

export type Frame = { kind: 'text'; data: string; id: number | null } | { kind: 'binary'; data: Buffer };

const anyNumber = fc.oneof(fc.integer(), fc.double(), fc.constantFrom(-1, 0, -0, 2 ** 53, 1e308, Number.MAX_SAFE_INTEGER));
const anyValue = fc.oneof(fc.jsonValue({ maxDepth: 3 }), anyNumber, fc.string({ unit: 'binary', maxLength: 40 }));
const appinfoLike = fc.oneof(
  fc.uuid(),
  fc.string({ unit: 'binary', maxLength: 140 }),
  fc.constantFrom('recall:a', 'group:g:create', 'receipt:1:1', 'tick:x', '__proto__'),
);
const userLike = fc.oneof(fc.constantFrom(...USERS), fc.string({ maxLength: 70 }), fc.constant('a:b'));
const recipient = fc.oneof(fc.record({ user: userLike }), fc.record({ group: userLike }), anyValue);
const bodyLike = fc.oneof(
  fc.jsonValue({ maxDepth: 6 }),
  fc.constant(JSON.parse('{"__proto__":{"x":1},"constructor":{"prototype":1}}') as unknown),
  fc.string({ unit: 'binary', maxLength: 200 }),
);

const argsFor: Record<string, fc.Arbitrary<Record<string, unknown>>> = {
  send: fc.record(
    { appinfo: appinfoLike, to: recipient, type: fc.oneof(fc.constant('text'), anyValue), body: bodyLike },
    { requiredKeys: [] },
  ),
  sync: fc.record({ maxSeq: anyNumber, limit: anyNumber }, { requiredKeys: [] }),
  history: fc.record({ beforeSeq: anyNumber, limit: anyNumber }, { requiredKeys: [] }),
  read: fc.record({ seqs: fc.oneof(fc.array(anyNumber, { maxLength: 5 }), anyValue) }, { requiredKeys: [] }),
  recall: fc.record({ appinfo: appinfoLike }, { requiredKeys: [] }),
  auth: fc.record({ token: fc.oneof(fc.string(), anyValue, fc.constant('a.b.c')) }, { requiredKeys: [] }),
  'group.create': fc.record(
    { name: fc.oneof(fc.string(), anyValue), members: fc.oneof(fc.array(userLike, { maxLength: 4 }), anyValue), group: userLike },
    { requiredKeys: [] },
  ),
  'group.add': fc.record({ group: userLike, members: fc.oneof(fc.array(userLike, { maxLength: 4 }), anyValue) }, { requiredKeys: [] }),
  'group.remove': fc.record({ group: userLike, members: fc.oneof(fc.array(userLike, { maxLength: 4 }), anyValue) }, { requiredKeys: [] }),
  'group.rename': fc.record({ group: userLike, name: fc.oneof(fc.string({ maxLength: 140 }), anyValue) }, { requiredKeys: [] }),
  'group.info': fc.record({ group: userLike }, { requiredKeys: [] }),
  'group.history': fc.record({ group: userLike, afterGseq: anyNumber, beforeGseq: anyNumber, limit: anyNumber }, { requiredKeys: [] }),
  'group.ack': fc.record({ group: userLike, gseq: anyNumber }, { requiredKeys: [] }),
  'group.readers': fc.record({ group: userLike, gseq: anyNumber, after: anyValue, limit: anyNumber }, { requiredKeys: [] }),
};

type Draft =
  | { kind: 'garbage'; data: string }
  | { kind: 'value'; value: unknown }
  | { kind: 'op'; op: string; args: Record<string, unknown> }
  | { kind: 'binary'; data: Uint8Array };

const draft: fc.Arbitrary<Draft> = fc.oneof(
  { weight: 2, arbitrary: fc.string({ unit: 'binary', maxLength: 300 }).map((data): Draft => ({ kind: 'garbage', data })) },
  { weight: 1, arbitrary: fc.integer({ min: 1, max: 200 }).map((n): Draft => ({ kind: 'garbage', data: '['.repeat(n) + ']'.repeat(n) })) },
  { weight: 2, arbitrary: fc.jsonValue({ maxDepth: 3 }).map((value): Draft => ({ kind: 'value', value })) },
  { weight: 1, arbitrary: fc.uint8Array({ maxLength: 200 }).map((data): Draft => ({ kind: 'binary', data })) },
  {
    weight: 2,
    arbitrary: fc
      .tuple(fc.string({ maxLength: 20 }), fc.dictionary(fc.string({ maxLength: 10 }), anyValue, { maxKeys: 4 }))
      .map(([op, args]): Draft => ({ kind: 'op', op, args })),
  },
  {
    weight: 12,
    arbitrary: fc.constantFrom(...OPS).chain((op) => (argsFor[op] ?? fc.constant({})).map((args): Draft => ({ kind: 'op', op, args }))),
  },
);

/** `count` frames from `seed`; op frames get ids from `firstId` on (a reply must carry it). */
export function fuzzFrames(count: number, seed: number, firstId: number): Frame[] {
  let id = firstId;
  return fc.sample(draft, { numRuns: count, seed }).map((d): Frame => {
    switch (d.kind) {
      case 'garbage':
        return { kind: 'text', data: d.data, id: null };
      case 'binary':
        return { kind: 'binary', data: Buffer.from(d.data) };
      case 'value':
        return { kind: 'text', data: JSON.stringify(d.value) ?? 'null', id: null };
      case 'op': {
        const frameId = id++;
        // `id` leads, as clients write it (a frame refused unread is answered with it); a fuzzed
        // `id` or `op` argument must not replace the frame's own.
        const { id: _id, op: _op, ...args } = d.args;
        return { kind: 'text', data: JSON.stringify({ id: frameId, op: d.op, ...args }), id: frameId };
      }
    }
  });
}
