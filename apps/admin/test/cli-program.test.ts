/** The command tree in-process: help on every command, usage errors, and the output helpers. */
import { CommanderError } from 'commander';
import { describe, expect, it } from 'vitest';
import { buildProgram } from '../src/index.ts';
import { keyValues, table } from '../src/output.ts';
import { ProgressBar } from '../src/progress.ts';

async function parse(args: string[]): Promise<{ out: string; err: string; error: unknown }> {
  let out = '';
  let err = '';
  const program = buildProgram({
    writeOut: (s) => {
      out += s;
    },
    writeErr: (s) => {
      err += s;
    },
  });
  let error: unknown;
  try {
    await program.parseAsync(['node', 'seqline-admin', ...args]);
  } catch (e) {
    error = e;
  }
  return { out, err, error };
}

const COMMANDS = [
  [],
  ['tiers'],
  ['tiers', 'show'],
  ['tiers', 'set'],
  ['limits'],
  ['limits', 'show'],
  ['limits', 'set'],
  ['group'],
  ['group', 'show'],
  ['inbox'],
  ['conversations'],
  ['conversations', 'rebuild'],
  ['deadletters'],
  ['deadletters', 'list'],
  ['deadletters', 'replay'],
  ['hooks'],
  ['hooks', 'show'],
  ['hooks', 'set'],
  ['devices'],
  ['token'],
  ['token', 'issue'],
  ['schema'],
  ['schema', 'migrate'],
  ['schema', 'status'],
];

describe('seqline-admin command tree', () => {
  it.each(COMMANDS.map((path) => [path.join(' ') || '(root)', path] as const))(
    '%s --help prints usage and exits 0',
    async (_name, path) => {
      const { out, error } = await parse([...path, '--help']);
      expect(error).toBeInstanceOf(CommanderError);
      expect((error as CommanderError).exitCode).toBe(0);
      expect(out).toContain(`Usage: seqline-admin${path.length > 0 ? ` ${path.join(' ')}` : ''}`);
      if (path.length > 0) expect(out).toContain('--json'); // global options are listed on every command
    },
  );

  it('help lists every flag of limits set and tiers set', async () => {
    const limits = (await parse(['limits', 'set', '--help'])).out;
    for (const flag of [
      '--large-group-concurrency',
      '--small-pool',
      '--large-pool',
      '--huge-pool',
      '--per-user-in-flight',
      '--per-tenant-in-flight',
    ]) {
      expect(limits).toContain(flag);
    }
    const tiers = (await parse(['tiers', 'set', '--help'])).out;
    for (const flag of ['--small-below', '--large-below', '--max-members', '--hysteresis']) expect(tiers).toContain(flag);
  });

  it('unknown commands and bad values are commander errors with a non-zero code (main maps them to 2)', async () => {
    for (const args of [
      ['nope'],
      ['limits', 'set', '--small-pool', '0'],
      ['inbox'],
      ['inbox', 'bob', '--after', '-1'],
      ['conversations', 'rebuild'],
      ['conversations', 'frobnicate', 'bob'],
      ['group', 'show', 'g', '--members', 'x'],
    ]) {
      const { err, error } = await parse(args);
      expect(error).toBeInstanceOf(CommanderError);
      expect((error as CommanderError).exitCode).not.toBe(0);
      expect(err).not.toBe('');
    }
  });
});

describe('output helpers', () => {
  it('table aligns columns and does not pad the last one', () => {
    expect(
      table(
        ['id', 'queue'],
        [
          ['a', 'fanout'],
          ['long-id', 'x'],
        ],
      ),
    ).toBe('id       queue\na        fanout\nlong-id  x');
  });

  it('keyValues aligns labels', () => {
    expect(
      keyValues([
        ['a', 1],
        ['long', 'x'],
      ]),
    ).toBe('a     1\nlong  x');
  });
});

describe('progress bar', () => {
  it('draws on a terminal and ends with a newline', () => {
    const writes: string[] = [];
    const bar = new ProgressBar('replaying', 2, {
      isTTY: true,
      columns: 80,
      write: (t) => {
        writes.push(t);
        return true;
      },
    });
    bar.tick('a');
    bar.tick('b');
    bar.finish();
    expect(writes.at(-2)).toMatch(/replaying \[#{30}\] 2\/2 b$/);
    expect(writes.at(-1)).toBe('\n');
  });

  it('fits the line to the terminal width; a width of 0 (some pseudo-terminals) is not taken literally', () => {
    const narrow: string[] = [];
    new ProgressBar('migrating', 1, {
      isTTY: true,
      columns: 20,
      write: (t) => {
        narrow.push(t);
        return true;
      },
    }).tick('001_init');
    expect(narrow.at(-1)).toBe('\r\x1b[2Kmigrating [########');
    const unknown: string[] = [];
    new ProgressBar('migrating', 1, {
      isTTY: true,
      columns: 0,
      write: (t) => {
        unknown.push(t);
        return true;
      },
    }).tick('001_init');
    expect(unknown.at(-1)).toMatch(/1\/1 001_init$/);
  });

  it('writes nothing when stderr is not a terminal (pipes, CI, --json scripts)', () => {
    const writes: string[] = [];
    const bar = new ProgressBar('replaying', 3, {
      isTTY: false,
      write: (t) => {
        writes.push(t);
        return true;
      },
    });
    bar.tick('a');
    bar.finish();
    expect(writes).toEqual([]);
  });
});
