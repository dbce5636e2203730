/**
 * The deployment files held against the README, CI and the benchmarks. The Dockerfile runs the
 * Node line the README and CI name, on the transport that loads on it, and its command is `npm
 * start`'s with the V8 flags the benchmarks ran with. docker-compose.yml — read by a small YAML
 * reader, as no Docker engine is here to run `docker compose config` — has the images, ports
 * and variables the README names, and a Redis under a permissive license.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseComposeYaml, type YamlValue } from './support/compose-yaml.ts';
import { readmeSection, readRepoFile, REPO_ROOT } from './support/readme.ts';

const README = readRepoFile('README.md');
const DOCKERFILE = readRepoFile('Dockerfile');
const COMPOSE = parseComposeYaml(readRepoFile('docker-compose.yml'));
const SCRIPTS = (JSON.parse(readRepoFile('package.json')) as { scripts: Record<string, string> }).scripts;

/** Node's module ABI per release line: the uWebSockets.js binaries are named by it. */
const NODE_ABI: Readonly<Record<number, number>> = { 20: 115, 22: 127, 24: 137 };

const asMap = (value: YamlValue | undefined, what: string): Record<string, YamlValue> => {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw new Error(`${what}: not a mapping`);
  return value;
};
const asList = (value: YamlValue | undefined, what: string): string[] => {
  if (!Array.isArray(value)) throw new Error(`${what}: not a list`);
  return value.map((v) => {
    if (typeof v !== 'string') throw new Error(`${what}: not a list of strings`);
    return v;
  });
};
const services = asMap(COMPOSE['services'], 'services');
const service = (name: string) => asMap(services[name], `services.${name}`);

/** The V8/Node flags of a `node …` command line, without the module-loading ones (--conditions, --import X). */
function nodeFlags(words: readonly string[]): string[] {
  const flags: string[] = [];
  for (let i = 1; i < words.length && words[i]?.startsWith('--'); i += 1) {
    const word = words[i] ?? '';
    if (word === '--import') i += 1;
    else if (!word.startsWith('--conditions')) flags.push(word);
  }
  return flags;
}
const BENCH_FLAGS = nodeFlags(SCRIPTS['bench']?.split(/\s+/) ?? []);

/** `ENV A=1 B=2` lines of the Dockerfile's last stage (the image that runs). */
function runtimeStage(): string {
  return DOCKERFILE.slice(DOCKERFILE.lastIndexOf('\nFROM '));
}
function imageEnv(): Record<string, string> {
  const env: Record<string, string> = {};
  for (const line of runtimeStage().matchAll(/^ENV (.+)$/gm)) {
    for (const pair of (line[1] ?? '').split(/\s+/)) {
      const [key, value] = pair.split('=');
      if (key && value !== undefined) env[key] = value;
    }
  }
  return env;
}

describe('the README section the numbers come from', () => {
  it('names Node 24 as the line to run, as CI runs the whole suite on it', () => {
    expect(readmeSection('First ten minutes')).toMatch(/\(Node 24;/);
    expect(readRepoFile('.ci/run')).toMatch(/PATH="\$NODE24_BIN:\$PATH" REQUIRE_SERVICES=1 npm test/);
  });

  it('the benchmarks run with a V8 flag to compare against', () => {
    expect(BENCH_FLAGS).toEqual(['--max-semi-space-size=64']);
  });
});

describe('package.json start', () => {
  it("runs the built server with the benchmarks' flags", () => {
    const words = SCRIPTS['start']?.split(/\s+/) ?? [];
    expect(words[0]).toBe('node');
    expect(nodeFlags(words)).toEqual(BENCH_FLAGS);
    expect(words.at(-1)).toBe('apps/server/dist/main.js');
  });
});

describe('Dockerfile', () => {
  const stages = [...DOCKERFILE.matchAll(/^FROM node:(\d+)-(\S+)/gm)];

  it('builds and runs on Node 24, the line the README names (Node 20 is past its end of life)', () => {
    expect(stages.length).toBe(2);
    for (const stage of stages) expect(Number(stage[1])).toBe(24);
    expect(README).toMatch(/The image \(`Dockerfile`\) runs Node 24/);
  });

  it('runs the transport that loads on that Node: ws where no uWebSockets.js binary exists for its ABI', () => {
    const major = Number(stages[0]?.[1]);
    const abi = NODE_ABI[major];
    expect(abi, `the module ABI of Node ${major}`).toBeDefined();
    const binaries = join(REPO_ROOT, 'node_modules/uWebSockets.js/binaries');
    expect(existsSync(binaries)).toBe(true);
    const native = ['x64', 'arm64'].some((arch) => existsSync(join(binaries, `uws_linux_${arch}_${abi}.node`)));
    const transport = imageEnv()['SEQLINE_TRANSPORT'];
    if (native) expect(transport ?? 'auto').not.toBe('ws');
    else {
      expect(transport).toBe('ws');
      expect(README).toContain('`SEQLINE_TRANSPORT=ws`');
    }
  });

  it("runs `npm start`'s command, with the benchmarks' flags, and exposes the README's port", () => {
    const cmd = /^CMD (\[.*\])$/m.exec(runtimeStage())?.[1];
    const words = JSON.parse(cmd ?? '[]') as string[];
    expect(words).toEqual(SCRIPTS['start']?.split(/\s+/));
    expect(nodeFlags(words)).toEqual(BENCH_FLAGS);
    const exposed = /^EXPOSE (\d+)$/m.exec(DOCKERFILE)?.[1];
    expect(README).toContain(`| \`PORT\` | \`${exposed}\` |`);
  });
});

describe('docker-compose.yml', () => {
  it('the images the README names, Redis being Valkey or a Redis of 7.2 or older (BSD-licensed)', () => {
    const images = Object.fromEntries(Object.entries(services).map(([name, s]) => [name, asMap(s, name)['image']]));
    expect(String(images['scylla'])).toMatch(/^scylladb\/scylla:/);
    expect(String(images['nats'])).toMatch(/^nats:/);
    const redis = String(images['redis']);
    // `redis:7` follows 7.x past 7.2: only a tag that stops at 7.2 or before counts.
    const [major, minor] = (/^redis:(\d+)\.(\d+)/.exec(redis) ?? []).slice(1).map(Number);
    const oldRedis = major !== undefined && minor !== undefined && (major < 7 || (major === 7 && minor <= 2));
    const permissive = /^valkey\/valkey:\d/.test(redis) || oldRedis;
    expect(permissive, `${redis}: Redis after 7.2 is not under a permissive license`).toBe(true);
    const docker = /With Docker:[\s\S]*?\n\n/.exec(README)?.[0] ?? '';
    expect(docker).toContain('ScyllaDB');
    expect(docker).toContain(redis.startsWith('valkey') ? 'Valkey' : 'Redis');
    expect(docker).toContain('NATS');
    // The server binary and the health probe are Valkey's own where the image is Valkey's.
    if (redis.startsWith('valkey')) {
      expect(asList(service('redis')['command'], 'redis command')[0]).toBe('valkey-server');
      expect(asList(asMap(service('redis')['healthcheck'], 'healthcheck')['test'], 'test')).toContain('valkey-cli');
    }
  });

  it("the gateway listens on the README's port, and the README's compose command sets the secret compose requires", () => {
    const gateway = service('gateway');
    expect(asList(gateway['ports'], 'ports')).toEqual(['8080:8080']);
    expect(asMap(gateway['environment'], 'environment')['PORT']).toBe('8080');
    expect(README).toMatch(/a gateway on :8080/);
    expect(String(asMap(gateway['environment'], 'environment')['SEQLINE_SECRET'])).toMatch(/^\$\{SEQLINE_SECRET:\?/);
    expect(README).toContain('SEQLINE_SECRET=$(openssl rand -base64 32) docker compose up --build');
  });

  it('every variable it sets is one the README documents, and the service addresses name its services', () => {
    const names = new Set<string>();
    for (const [name, s] of Object.entries(services)) {
      const environment = asMap(s, name)['environment'];
      if (environment !== undefined) for (const key of Object.keys(asMap(environment, `${name}.environment`))) names.add(key);
    }
    expect(names.size).toBeGreaterThan(5);
    for (const name of names) expect(README, `${name} is not in the README`).toContain(`\`${name}\``);
    const env = asMap(service('gateway')['environment'], 'environment');
    for (const address of [env['REDIS_URL'], env['NATS_URL'], env['SCYLLA_CONTACT_POINTS']]) {
      const host = /^(?:\w+:\/\/)?([\w-]+):\d+$/.exec(String(address))?.[1];
      expect(Object.keys(services), String(address)).toContain(host);
    }
  });

  it('NATS runs the config scripts/services.sh runs: JetStream fsyncs every write before its ack', () => {
    const nats = service('nats');
    const command = asList(nats['command'], 'nats command');
    const conf = command[command.indexOf('-c') + 1] ?? '(no -c)';
    const mount = asList(nats['volumes'], 'nats volumes').find((v) => v.split(':')[1] === conf);
    expect(mount?.split(':')[0]).toBe('./scripts/services/nats.conf');
    expect(readRepoFile('scripts/services/nats.conf')).toMatch(/^\s*sync_interval:\s*always\s*$/m);
    expect(readRepoFile('scripts/services.sh')).toContain('NATS_SYNC_INTERVAL="${NATS_SYNC_INTERVAL:-always}"');
    expect(readRepoFile('scripts/services/nats.sh')).toContain('echo "$CONF_DIR/nats.conf"');
  });

  it("the workers run with the benchmarks' flags (the README's worker line too)", () => {
    const command = asList(service('worker')['command'], 'worker command');
    expect(nodeFlags(command)).toEqual(BENCH_FLAGS);
    expect(command.at(-1)).toBe('apps/worker/dist/main.js');
    expect(README).toContain(`node ${BENCH_FLAGS.join(' ')} apps/worker/dist/main.js`);
  });
});

describe('the compose reader', () => {
  it('reads anchors, merges, flow collections, quotes and comments as YAML does', () => {
    const text = [
      'x-env: &env',
      "  A: '1' # a comment",
      '  B: two',
      'services:',
      '  one:',
      '    environment:',
      '      <<: *env',
      "      B: 'it''s # not a comment'",
      '    command: [\'node\', "-e", "a(\'b\'), c"]',
      '    deploy: { replicas: 2 }',
      '    empty:',
    ].join('\n');
    expect(parseComposeYaml(text)).toEqual({
      'x-env': { A: '1', B: 'two' },
      services: {
        one: {
          environment: { A: '1', B: "it's # not a comment" },
          command: ['node', '-e', "a('b'), c"],
          deploy: { replicas: '2' },
          empty: '',
        },
      },
    });
  });

  it.each([
    ['a block sequence', 'list:\n  - a\n'],
    ['a multi-line scalar', 'text: |\n  line\n'],
    ['an unknown alias', 'a: *nowhere\n'],
    ['a repeated key', 'a: 1\na: 2\n'],
    ['a tab', 'a:\n\tb: 1\n'],
    ['an unclosed flow sequence', "a: ['x'\n"],
  ])('refuses what it does not read: %s', (_what, text) => {
    expect(() => parseComposeYaml(text)).toThrow();
  });
});
