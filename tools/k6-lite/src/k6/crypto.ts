/** k6/crypto: hashes and HMAC with k6's output encodings, and randomBytes. */
import { createHash, createHmac, randomBytes as nodeRandomBytes } from 'node:crypto';
import { base64, toArrayBuffer, toBuffer } from './encoding.ts';

type Algorithm = 'md4' | 'md5' | 'sha1' | 'sha256' | 'sha384' | 'sha512' | 'sha512_224' | 'sha512_256' | 'ripemd160';
type OutputEncoding = 'hex' | 'base64' | 'base64url' | 'base64rawurl' | 'base64raw' | 'binary';
type Input = string | ArrayBuffer;

const NODE_NAME: Record<Algorithm, string> = {
  md4: 'md4',
  md5: 'md5',
  sha1: 'sha1',
  sha256: 'sha256',
  sha384: 'sha384',
  sha512: 'sha512',
  sha512_224: 'sha512-224',
  sha512_256: 'sha512-256',
  ripemd160: 'ripemd160',
};

function nodeAlgorithm(algorithm: Algorithm): string {
  const name = NODE_NAME[algorithm];
  if (!name) throw new Error(`crypto: unknown algorithm "${String(algorithm)}"`);
  return name;
}

function encode(digest: Buffer, encoding: OutputEncoding): string | ArrayBuffer {
  switch (encoding) {
    case 'hex':
      return digest.toString('hex');
    case 'base64':
      return base64(digest, 'std');
    case 'base64raw':
      return base64(digest, 'rawstd');
    case 'base64url':
      return base64(digest, 'url');
    case 'base64rawurl':
      return base64(digest, 'rawurl');
    case 'binary':
      return toArrayBuffer(digest);
    default:
      throw new Error(`crypto: unknown output encoding "${String(encoding)}"`);
  }
}

export function hmac(algorithm: Algorithm, secret: Input, data: Input, outputEncoding: OutputEncoding): string | ArrayBuffer {
  return encode(createHmac(nodeAlgorithm(algorithm), toBuffer(secret)).update(toBuffer(data)).digest(), outputEncoding);
}

function hashWith(algorithm: Algorithm) {
  return (input: Input, outputEncoding: OutputEncoding): string | ArrayBuffer =>
    encode(createHash(nodeAlgorithm(algorithm)).update(toBuffer(input)).digest(), outputEncoding);
}

export const md5 = hashWith('md5');
export const sha1 = hashWith('sha1');
export const sha256 = hashWith('sha256');
export const sha384 = hashWith('sha384');
export const sha512 = hashWith('sha512');

/** An incremental hash or HMAC: update(...) then digest(encoding). */
class Hasher {
  constructor(private readonly h: ReturnType<typeof createHash> | ReturnType<typeof createHmac>) {}
  update(input: Input): void {
    this.h.update(toBuffer(input));
  }
  digest(outputEncoding: OutputEncoding): string | ArrayBuffer {
    return encode(this.h.digest(), outputEncoding);
  }
}

export function createHasher(algorithm: Algorithm): Hasher {
  return new Hasher(createHash(nodeAlgorithm(algorithm)));
}
export { createHasher as createHash };
export function createHMAC(algorithm: Algorithm, secret: Input): Hasher {
  return new Hasher(createHmac(nodeAlgorithm(algorithm), toBuffer(secret)));
}

export function randomBytes(size: number): ArrayBuffer {
  return toArrayBuffer(nodeRandomBytes(size));
}

export default { hmac, md5, sha1, sha256, sha384, sha512, createHash: createHasher, createHMAC, randomBytes };
