/**
 * Rows that carry client JSON (entries, jobs with entries in their payload) are stored as their
 * JSON text, not as a msgpack object: lmdb-js's msgpackr renames an object key "__proto__" to
 * "__proto_" when it decodes (its guard against prototype pollution) and encodes an unpaired
 * surrogate as U+FFFD, so what a sync read back differed from what was sent. JSON text keeps
 * every key and string exactly (JSON.stringify escapes a lone surrogate), and JSON.parse makes
 * "__proto__" an own data property, never a prototype. The database's msgpack encoding stays:
 * the text is stored as a msgpack string.
 */

/** A row value: the JSON text of a `T` (the type parameter only says what it decodes to). */
export type JsonRow<T extends object> = string & { readonly jsonOf?: T };

export function toJsonRow<T extends object>(value: T): JsonRow<T> {
  return JSON.stringify(value);
}

export function fromJsonRow<T extends object>(row: JsonRow<T>): T;
export function fromJsonRow<T extends object>(row: JsonRow<T> | undefined): T | undefined;
export function fromJsonRow<T extends object>(row: JsonRow<T> | undefined): T | undefined {
  return row === undefined ? undefined : (JSON.parse(row) as T);
}
