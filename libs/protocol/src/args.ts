/** Validates one op's arguments (shared by WebSocket frames and the HTTP API). */
import type { z } from 'zod';
import { BadRequestError, hasLoneSurrogate, TooLargeError, type Json, type SeqlineError } from '@seqline/core';
import { MAX_BODY_BYTES, MAX_BODY_DEPTH } from './limits.ts';
import { isGroupOp, opArgsSchemas, type Op, type OpArgs } from './schemas.ts';
import { fieldWithLoneSurrogate, mayHoldLoneSurrogate } from './well-formed.ts';

export type ParsedArgs<O extends Op> = { ok: true; args: OpArgs<O> } | { ok: false; error: SeqlineError };

/** `jsonText`, when given, is the text `input` was parsed from (it lets most frames skip a walk). */
export function parseOpArgs<O extends Op>(op: O, input: unknown, jsonText?: string): ParsedArgs<O> {
  // First, over every field (ignored ones too): what cannot be stored exactly is not accepted.
  const mayBeIllFormed = jsonText === undefined || mayHoldLoneSurrogate(jsonText);
  const illFormed = mayBeIllFormed && typeof input === 'object' && input !== null ? fieldWithLoneSurrogate(input) : null;
  if (illFormed !== null) {
    const field = hasLoneSurrogate(illFormed) ? 'a field name' : illFormed.slice(0, 32);
    return { ok: false, error: new BadRequestError(`${op}: ${field}: contains an unpaired UTF-16 surrogate (not valid Unicode)`) };
  }
  const schema = opArgsSchemas[op] as unknown as z.ZodType<OpArgs<O>>;
  const parsed = schema.safeParse(isGroupOp(op) ? withGroupAlias(input) : input);
  if (!parsed.success) return { ok: false, error: new BadRequestError(describeIssues(op, parsed.error.issues)) };
  if (op === 'send' || op === 'edit') {
    // Both carry a message body (edit: its new content), under the same size and depth limits.
    const bodyError = checkBody((parsed.data as OpArgs<'send' | 'edit'>).body);
    if (bodyError) return { ok: false, error: bodyError };
  }
  return { ok: true, args: parsed.data };
}

/** `groupId` is accepted for `group` (the original design's name); `group` wins when both are given. */
function withGroupAlias(input: unknown): unknown {
  if (typeof input !== 'object' || input === null) return input;
  const fields = input as Record<string, unknown>;
  if (fields['group'] !== undefined || fields['groupId'] === undefined) return input;
  return { ...fields, group: fields['groupId'] };
}

/**
 * A body must re-encode within MAX_BODY_BYTES and nest at most MAX_BODY_DEPTH levels: a
 * deeper one could overflow the stack each time a sync re-encodes it (a poisoned inbox).
 */
export function checkBody(body: Json): SeqlineError | null {
  if (nestsDeeperThan(body, MAX_BODY_DEPTH)) {
    return new BadRequestError(`body: nests deeper than ${MAX_BODY_DEPTH} levels`);
  }
  const bytes = Buffer.byteLength(JSON.stringify(body), 'utf8');
  if (bytes > MAX_BODY_BYTES) {
    return new TooLargeError(`body: ${bytes} bytes encoded, limit is ${MAX_BODY_BYTES}`);
  }
  return null;
}

function nestsDeeperThan(value: unknown, maxDepth: number): boolean {
  // Iterative on purpose: the point is to refuse values too deep for recursion.
  const stack: Array<{ value: unknown; depth: number }> = [{ value, depth: 0 }];
  for (let item = stack.pop(); item !== undefined; item = stack.pop()) {
    if (typeof item.value !== 'object' || item.value === null) continue;
    if (item.depth >= maxDepth) return true;
    const children = Array.isArray(item.value) ? item.value : Object.values(item.value);
    for (const child of children) {
      if (typeof child === 'object' && child !== null) stack.push({ value: child, depth: item.depth + 1 });
    }
  }
  return false;
}

/** "send: to.user: must be …" — names the op and the field of the first problems. */
function describeIssues(op: Op, issues: readonly z.core.$ZodIssue[]): string {
  const parts = issues.slice(0, 3).map((issue) => {
    const field = issue.path.map(String).join('.') || 'arguments';
    const message = /received undefined$/.test(issue.message) ? 'is required' : issue.message;
    return `${field}: ${message}`;
  });
  const more = issues.length > 3 ? ` (and ${issues.length - 3} more)` : '';
  return `${op}: ${parts.join('; ')}${more}`;
}
