/**
 * The SDK keeps its own copy of the wire vocabulary (src/wire.ts) so that it ships no server
 * code; this test is what stops the copy drifting from the server's: an op, error code or entry
 * kind added on one side only fails here.
 */
import {
  ENTRY_KINDS as SERVER_ENTRY_KINDS,
  ERROR_CODES as SERVER_ERROR_CODES,
  type EntryKind as ServerEntryKind,
  type ErrorCode as ServerErrorCode,
} from '@seqline/core';
import { OPS, type Op } from '@seqline/protocol';
import { describe, expect, it } from 'vitest';
import { ENTRY_KINDS, ERROR_CODES, type EntryKind, type ErrorCode, type OpName } from '../src/wire.ts';

/** Compile-time half: each side's union assigns to the other's, or `tsc` fails. */
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
const sameOps: Same<OpName, Op> = true;
const sameCodes: Same<ErrorCode, ServerErrorCode> = true;
const sameKinds: Same<EntryKind, ServerEntryKind> = true;

const sorted = (xs: readonly string[]) => [...xs].sort();

describe('the client SDK speaks the server protocol', () => {
  it('has the same ops, error codes and entry kinds, at compile time and at run time', () => {
    expect([sameOps, sameCodes, sameKinds]).toEqual([true, true, true]);
    expect(sorted(ERROR_CODES)).toEqual(sorted(SERVER_ERROR_CODES));
    expect(sorted(ENTRY_KINDS)).toEqual(sorted(SERVER_ENTRY_KINDS));
  });

  it('names every op the gateway accepts', () => {
    // Record<OpName, true> must list exactly the client's ops (tsc); the server's list must match it.
    const clientOps: Record<OpName, true> = {
      send: true,
      sync: true,
      history: true,
      read: true,
      recall: true,
      'group.create': true,
      'group.add': true,
      'group.remove': true,
      'group.rename': true,
      'group.info': true,
      'group.history': true,
      'group.ack': true,
      'group.readers': true,
      auth: true,
      conversations: true,
      delete: true,
      clear: true,
      edit: true,
    };
    expect(sorted(Object.keys(clientOps))).toEqual(sorted(OPS));
  });
});
