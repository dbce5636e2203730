/**
 * CQL values encoded once, by us, for the append's hot path. cassandra-driver sends a Buffer
 * parameter as the already-serialized value, whatever the column type (`Encoder.encode` returns
 * it as is), so a value two statements share — an entry row and its dedup row bind the same
 * stream, bucket, seq and appinfo — is encoded once instead of once per statement, and a bigint
 * skips the driver's Number → Long → Buffer conversion.
 */

/** A `text` value: its UTF-8 bytes. */
export function textValue(value: string): Buffer {
  return Buffer.from(value, 'utf8');
}

/** A `bigint` value (a safe integer): 8 bytes, big-endian two's complement. */
export function bigintValue(value: number): Buffer {
  if (!Number.isSafeInteger(value)) throw new RangeError(`not a safe integer: ${value}`);
  const out = Buffer.allocUnsafe(8);
  // Two 32-bit halves: no BigInt allocated per value.
  const high = Math.floor(value / 0x1_0000_0000);
  out.writeInt32BE(high, 0);
  out.writeUInt32BE(value - high * 0x1_0000_0000, 4);
  return out;
}
