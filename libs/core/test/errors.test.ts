import { describe, expect, it } from 'vitest';
import { ERROR_CODES, errorOfCode, InternalError, OverloadedError, SeqlineError } from '../src/index.ts';

describe('errorOfCode', () => {
  it('rebuilds every protocol code as its own class, message kept', () => {
    for (const code of ERROR_CODES) {
      const err = errorOfCode(code, `m ${code}`);
      expect(err).toBeInstanceOf(SeqlineError);
      expect([err.code, err.message]).toEqual([code, `m ${code}`]);
      expect(err.name).not.toBe('SeqlineError');
    }
    expect(errorOfCode('OVERLOADED', 'x')).toBeInstanceOf(OverloadedError);
    expect(errorOfCode('INTERNAL', 'x')).toBeInstanceOf(InternalError);
  });
});
