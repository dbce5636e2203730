import { describe, expect, it } from 'vitest';
import { errors, types } from 'cassandra-driver';
import { OverloadedError } from '@seqline/core';
import { storeError } from '../src/scylla/cql.ts';

describe('storeError', () => {
  it('turns storage that is unreachable or too slow into OVERLOADED, keeping the cause', () => {
    const transient = [
      new errors.NoHostAvailableError({}),
      new errors.OperationTimedOutError('timed out'),
      new errors.ResponseError(types.responseErrorCodes.unavailableException, 'not enough replicas'),
      new errors.ResponseError(types.responseErrorCodes.writeTimeout, 'write timeout'),
      new errors.ResponseError(types.responseErrorCodes.readTimeout, 'read timeout'),
      new errors.ResponseError(types.responseErrorCodes.overloaded, 'overloaded'),
    ];
    for (const err of transient) {
      const mapped = storeError(err);
      expect(mapped).toBeInstanceOf(OverloadedError);
      expect((mapped as OverloadedError).cause).toBe(err);
    }
  });

  it('lets every other error through unchanged (a bad query is not a reason to retry)', () => {
    const other = [
      new errors.ResponseError(types.responseErrorCodes.syntaxError, 'line 1: no viable alternative'),
      new errors.ResponseError(types.responseErrorCodes.invalid, 'unconfigured table'),
      new TypeError('not a number column value'),
      'a string',
    ];
    for (const err of other) expect(storeError(err)).toBe(err);
  });
});
