/** Option value parsers for commander: a bad value is a usage error (exit 2) naming the flag. */
import { InvalidArgumentError } from 'commander';

export function positiveInt(value: string): number {
  const n = /^\d{1,15}$/.test(value.trim()) ? Number(value) : NaN;
  if (!Number.isSafeInteger(n) || n <= 0) throw new InvalidArgumentError('must be a positive integer.');
  return n;
}

export function nonNegativeInt(value: string): number {
  const n = /^\d{1,15}$/.test(value.trim()) ? Number(value) : NaN;
  if (!Number.isSafeInteger(n)) throw new InvalidArgumentError('must be a non-negative integer.');
  return n;
}

/** A decimal fraction such as 0.1 (the server checks the range). */
export function fraction(value: string): number {
  const n = /^\d*\.?\d+$/.test(value.trim()) ? Number(value) : NaN;
  if (!Number.isFinite(n)) throw new InvalidArgumentError('must be a number such as 0.1.');
  return n;
}

/** Drops undefined fields: only the flags given become part of a patch. */
export function definedFields<T extends object>(values: T): Partial<T> {
  return Object.fromEntries(Object.entries(values).filter(([, v]) => v !== undefined)) as Partial<T>;
}
