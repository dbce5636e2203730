import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import cassandra from 'cassandra-driver';
import { bigintValue, textValue } from '../src/scylla/cql-values.ts';

// The append binds these Buffers where the driver would encode numbers and strings: they must
// be the very bytes the driver writes, and the driver must pass a Buffer through unchanged.
// `Encoder` is exported (lib/encoder.js, "experimental API") but not in the typings.
interface DriverEncoder {
  encode(value: unknown, type: number): unknown;
}
const { Encoder } = cassandra as unknown as { Encoder: new (protocolVersion: number, options: object) => DriverEncoder };
const driver = new Encoder(4, {});

describe('CQL values encoded by us', () => {
  it('a bigint is the bytes the driver encodes for the same number', () => {
    fc.assert(
      fc.property(fc.maxSafeInteger(), fc.constantFrom(0, 1, -1, 2 ** 32 - 1, 2 ** 32, -(2 ** 32), 2 ** 53 - 1), (n, edge) => {
        for (const value of [n, edge]) {
          expect(bigintValue(value)).toEqual(driver.encode(value, cassandra.types.dataTypes.bigint));
          expect(bigintValue(value).readBigInt64BE()).toBe(BigInt(value));
        }
      }),
    );
  });

  it('a text is the bytes the driver encodes for the same string', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'grapheme' }), (s) => {
        expect(textValue(s)).toEqual(driver.encode(s, cassandra.types.dataTypes.text));
      }),
    );
  });

  it('the driver sends a Buffer as the value, whatever the column type', () => {
    const encoded = bigintValue(42);
    expect(driver.encode(encoded, cassandra.types.dataTypes.bigint)).toBe(encoded);
    expect(driver.encode(encoded, cassandra.types.dataTypes.text)).toBe(encoded);
  });

  it('refuses a number that is not a safe integer', () => {
    for (const bad of [0.5, Number.NaN, 2 ** 53, Number.POSITIVE_INFINITY]) expect(() => bigintValue(bad)).toThrow(RangeError);
  });
});
