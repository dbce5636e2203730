/** A distributed process's settings are validated once, at start, with every problem named. */
import { describe, expect, it } from 'vitest';
import { ConfigError, loadDistributedConfig } from '../src/index.ts';

const SECRET = { SEQLINE_SECRET: 'a-secret-of-16-chars' };

describe('loadDistributedConfig', () => {
  it('fills the defaults, including the worker memory bounds', () => {
    const config = loadDistributedConfig(SECRET);
    expect(config.SEQLINE_SHARDS).toBe(64);
    expect(config.SEQLINE_MAX_SEQ_KEYS).toBe(4_000_000);
    expect(config.SEQLINE_MAX_RECENT_APPINFOS).toBe(100_000);
    expect(config.SEQLINE_MAX_CACHED_INBOXES).toBe(100_000);
    expect(config.SEQLINE_MAX_NOTIFY_ITEMS).toBe(100_000);
    expect(config.NATS_URL).toEqual(['nats://127.0.0.1:4222']);
  });

  it('has no push routing switch: presence routing is the only behaviour (SEQLINE_PUSH_ROUTING is gone)', () => {
    expect(loadDistributedConfig({ ...SECRET, SEQLINE_PUSH_ROUTING: 'inbox' })).not.toHaveProperty('SEQLINE_PUSH_ROUTING');
  });

  it('reads the memory bounds from the environment', () => {
    const config = loadDistributedConfig({
      ...SECRET,
      SEQLINE_MAX_SEQ_KEYS: '250000',
      SEQLINE_MAX_RECENT_APPINFOS: '0',
      SEQLINE_MAX_CACHED_INBOXES: '5000',
      SEQLINE_MAX_NOTIFY_ITEMS: '2000',
    });
    expect(config.SEQLINE_MAX_SEQ_KEYS).toBe(250_000);
    expect(config.SEQLINE_MAX_RECENT_APPINFOS).toBe(0);
    expect(config.SEQLINE_MAX_CACHED_INBOXES).toBe(5000);
    expect(config.SEQLINE_MAX_NOTIFY_ITEMS).toBe(2000);
  });

  it('SEQLINE_ALLOWED_ORIGINS: unset or blank allows any origin; a list is kept; one that names no origin is refused', () => {
    expect(loadDistributedConfig(SECRET).SEQLINE_ALLOWED_ORIGINS).toBeUndefined();
    expect(loadDistributedConfig({ ...SECRET, SEQLINE_ALLOWED_ORIGINS: ' ' }).SEQLINE_ALLOWED_ORIGINS).toBeUndefined();
    expect(loadDistributedConfig({ ...SECRET, SEQLINE_ALLOWED_ORIGINS: 'https://App.example.com/' }).SEQLINE_ALLOWED_ORIGINS).toEqual([
      'https://app.example.com',
    ]);
    for (const value of [',', 'app.example.com']) {
      expect(() => loadDistributedConfig({ ...SECRET, SEQLINE_ALLOWED_ORIGINS: value })).toThrow(/SEQLINE_ALLOWED_ORIGINS/);
    }
  });

  it('refuses bad values with one ConfigError naming each of them', () => {
    const load = () =>
      loadDistributedConfig({
        SEQLINE_MAX_SEQ_KEYS: '0',
        SEQLINE_MAX_RECENT_APPINFOS: 'many',
        SEQLINE_MAX_NOTIFY_ITEMS: '0',
        SEQLINE_SHARDS: '1.5',
        SEQLINE_LEASE_TTL_MS: '10',
      });
    expect(load).toThrow(ConfigError);
    try {
      load();
    } catch (err) {
      const message = (err as Error).message;
      for (const name of [
        'SEQLINE_SECRET',
        'SEQLINE_MAX_SEQ_KEYS',
        'SEQLINE_MAX_RECENT_APPINFOS',
        'SEQLINE_MAX_NOTIFY_ITEMS',
        'SEQLINE_SHARDS',
        'SEQLINE_LEASE_TTL_MS',
      ])
        expect(message).toContain(name);
    }
  });
});
