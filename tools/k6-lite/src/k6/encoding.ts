/** k6/encoding: base64 in k6's four variants (std, rawstd, url, rawurl). */
type Variant = 'std' | 'rawstd' | 'url' | 'rawurl';

export function toBuffer(input: string | ArrayBuffer): Buffer {
  return typeof input === 'string' ? Buffer.from(input, 'utf8') : Buffer.from(new Uint8Array(input));
}

export function toArrayBuffer(b: Buffer): ArrayBuffer {
  return b.buffer.slice(b.byteOffset, b.byteOffset + b.byteLength) as ArrayBuffer;
}

export function base64(b: Buffer, variant: Variant): string {
  switch (variant) {
    case 'std':
      return b.toString('base64');
    case 'rawstd':
      return b.toString('base64').replace(/=+$/, '');
    case 'url': {
      const raw = b.toString('base64url');
      return raw + '='.repeat((4 - (raw.length % 4)) % 4);
    }
    case 'rawurl':
      return b.toString('base64url');
    default:
      throw new Error(`b64 encoding "${String(variant)}": use std, rawstd, url or rawurl`);
  }
}

export function b64encode(input: string | ArrayBuffer, encoding: Variant = 'std'): string {
  return base64(toBuffer(input), encoding);
}

/** The bytes, or with format "s" a UTF-8 string. */
export function b64decode(input: string, encoding: Variant = 'std', format?: 's'): ArrayBuffer | string {
  const b = Buffer.from(input, encoding === 'url' || encoding === 'rawurl' ? 'base64url' : 'base64');
  return format === 's' ? b.toString('utf8') : toArrayBuffer(b);
}

export default { b64encode, b64decode };
