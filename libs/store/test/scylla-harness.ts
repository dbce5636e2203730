/**
 * Test plumbing for the CQL adapter: where the cluster is, whether it answers, and the
 * skip-or-fail rule (REQUIRE_SERVICES=1 turns "no cluster" into a failure, as in CI).
 */
import { Client } from 'cassandra-driver';
import { afterAll, beforeAll } from 'vitest';
import type { Clock } from '@seqline/core';
import { requireServices } from '@seqline/testing';
import { migrateSchema, openScyllaStores, type ScyllaStores } from '@seqline/store/scylla';

export const CONTACT_POINTS = (process.env.SCYLLA_CONTACT_POINTS ?? '127.0.0.1:9042')
  .split(',')
  .map((point) => point.trim())
  .filter((point) => point.length > 0);
export const LOCAL_DC = process.env.SCYLLA_LOCAL_DC ?? 'datacenter1';
/** The keyspace the contract suites share (every test uses its own random tenant). */
export const TEST_KEYSPACE = process.env.SCYLLA_TEST_KEYSPACE ?? 'seqline_test';

export type Probe = { ok: true } | { ok: false; reason: string };

/** Connects and runs one query, or explains why not. */
export async function servicesAvailable(): Promise<Probe> {
  const client = newClient();
  try {
    await client.connect();
    await client.execute('SELECT release_version FROM system.local');
    return { ok: true };
  } catch (err) {
    return {
      ok: false,
      reason: `no CQL cluster at ${CONTACT_POINTS.join(',')} (${err instanceof Error ? err.message.split('\n')[0] : String(err)})`,
    };
  } finally {
    await client.shutdown().catch(() => undefined);
  }
}

/** Skips (or, with REQUIRE_SERVICES=1, fails) when no CQL cluster answers. */
export function requireOrSkip(probe: Probe, what: string): boolean {
  return requireServices(probe, what, 'a CQL cluster', 'start one with scripts/services.sh up or set SCYLLA_CONTACT_POINTS');
}

/** A bare driver client, for raw CQL in tests (schema checks, simulating a crashed writer). */
export function newClient(): Client {
  return new Client({
    contactPoints: CONTACT_POINTS,
    localDataCenter: LOCAL_DC,
    socketOptions: { connectTimeout: 2_000 },
    queryOptions: { prepare: true },
  });
}

export function openTestStores(options: { keyspace?: string; settingsName?: string; clock?: Clock } = {}): Promise<ScyllaStores> {
  return openScyllaStores({
    contactPoints: CONTACT_POINTS,
    localDataCenter: LOCAL_DC,
    keyspace: options.keyspace ?? TEST_KEYSPACE,
    ...(options.settingsName === undefined ? {} : { settingsName: options.settingsName }),
    ...(options.clock === undefined ? {} : { clock: options.clock }),
  });
}

/** A keyspace name unique to this run (dropped by the test that creates it). */
export function scratchKeyspace(prefix: string): string {
  return `${prefix}_${Date.now().toString(36)}${Math.random().toString(36).slice(2, 8)}`;
}

/**
 * For a describe block: a raw driver client and two store sets on the migrated test keyspace,
 * as two processes would hold them (each with its own writer state). Read them in tests only.
 */
export function useTwoStoreSets(): { raw: Client; a(): ScyllaStores; b(): ScyllaStores } {
  const raw = newClient();
  let pair: [ScyllaStores, ScyllaStores] | undefined;
  beforeAll(async () => {
    await migrateSchema(raw, { keyspace: TEST_KEYSPACE });
    pair = await Promise.all([openTestStores(), openTestStores()]);
  }, 120_000);
  afterAll(async () => {
    await Promise.all(pair?.map((stores) => stores.close()) ?? []);
    await raw.shutdown();
  });
  const get = (i: 0 | 1): ScyllaStores => {
    if (!pair) throw new Error('the stores open in beforeAll');
    return pair[i];
  };
  return { raw, a: () => get(0), b: () => get(1) };
}
