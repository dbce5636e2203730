/**
 * `hooks show|set TENANT`: a tenant's hook settings (URLs, policies, the signing secret). The
 * server validates every value. The secret is read only from a file or stdin, never a flag,
 * so it stays out of shell history and `ps`; no answer or output ever contains it.
 */
import { readFile } from 'node:fs/promises';
import { Option, type Command } from 'commander';
import { CliError, EXIT, UsageError } from './errors.ts';
import { adminClientFor, outputOf } from './globals.ts';
import { nonNegativeInt } from './numbers.ts';
import { emit, table } from './output.ts';

/** The redacted settings the server answers with (libs/messaging admin-hooks.ts). */
type ShownHooks = Record<string, string | number | boolean> & { secretSet: boolean };
interface HooksView {
  tenant: string;
  hooks: ShownHooks;
  override: ShownHooks;
  version: number;
}

/** Each setting: its flag name (also what --clear takes), its key in the API, and its flag. */
const SETTINGS: Array<{ name: string; key: string; option: () => Option }> = [
  { name: 'notify-url', key: 'notifyUrl', option: () => new Option('--notify-url <url>', 'where offline notifications are posted') },
  {
    name: 'notify-window-ms',
    key: 'notifyWindowMs',
    option: () =>
      new Option('--notify-window-ms <ms>', "one user's notifications within this window go out as one call").argParser(nonNegativeInt),
  },
  {
    name: 'preview',
    key: 'notifyPreview',
    option: () => new Option('--preview <on|off>', 'a short text preview in offline notifications').choices(['on', 'off']),
  },
  {
    name: 'before-send-url',
    key: 'beforeSendUrl',
    option: () => new Option('--before-send-url <url>', 'asked to allow, change or refuse each send'),
  },
  {
    name: 'before-send-timeout-ms',
    key: 'beforeSendTimeoutMs',
    option: () => new Option('--before-send-timeout-ms <ms>', 'how long a send waits for the before-send answer').argParser(nonNegativeInt),
  },
  {
    name: 'before-send-failure',
    key: 'beforeSendFailure',
    option: () =>
      new Option('--before-send-failure <mode>', 'when before-send cannot answer: refuse (closed) or allow (open)').choices([
        'closed',
        'open',
      ]),
  },
  { name: 'after-send-url', key: 'afterSendUrl', option: () => new Option('--after-send-url <url>', 'told of every stored message') },
  {
    name: 'send-policy',
    key: 'sendPolicy',
    option: () =>
      new Option('--send-policy <policy>', '1:1 sends: to anyone (open) or only to users sharing a group').choices([
        'open',
        'shared-group',
      ]),
  },
  {
    name: 'login-policy',
    key: 'loginPolicy',
    option: () => new Option('--login-policy <policy>', 'sessions a user may hold at once').choices(['all', 'one-per-platform', 'one']),
  },
];
const SECRET = { name: 'secret', key: 'secret' };
const CLEARABLE = [...SETTINGS.map((s) => s.name), SECRET.name];

export function registerHooksCommands(program: Command): void {
  const hooks = program.command('hooks').description("a tenant's hooks: URLs, signing secret, send and login policies");

  hooks
    .command('show')
    .description('print the hook settings in force for a tenant, and which come from its own override')
    .argument('<tenant>', 'tenant id')
    .action(async (tenant: string, _opts: object, cmd: Command) => {
      const view = await (await adminClientFor(cmd)).get<HooksView>(`hooks/${encodeURIComponent(tenant)}`);
      emit(outputOf(cmd), view, () => describeHooks(view));
    });

  const set = hooks
    .command('set')
    .description("change a tenant's hook settings (validated by the server; every process uses them within seconds)")
    .argument('<tenant>', 'tenant id')
    .option('--secret-file <path>', 'read the signing secret from this file ("-": from stdin); never pass it as a flag')
    .option('--clear <setting...>', `back to the process default: any of ${CLEARABLE.join(', ')}`)
    .addHelpText(
      'after',
      `
Examples (the tenant first: --clear takes every word after it):
  seqline-admin hooks set acme --notify-url https://push.example.com/n --secret-file ./hook-secret
  vault read -field=hook acme | seqline-admin hooks set acme --secret-file -
  seqline-admin hooks set acme --clear notify-url secret`,
    );
  // A new Option per program: buildProgram may run many times in one process (tests).
  for (const { option } of SETTINGS) set.addOption(option());
  set.action(async (tenant: string, opts: Record<string, unknown>, cmd: Command) => {
    const patch = await patchOf(opts);
    if (Object.keys(patch).length === 0) throw new UsageError('hooks set: give at least one setting, --secret-file or --clear');
    const view = await (await adminClientFor(cmd)).put<HooksView>(`hooks/${encodeURIComponent(tenant)}`, patch);
    emit(outputOf(cmd), view, () => `hooks updated\n${describeHooks(view)}`);
  });
}

/** The API patch from the flags: values as given (the server checks them), `null` for each --clear. */
async function patchOf(opts: Record<string, unknown>): Promise<Record<string, unknown>> {
  const patch: Record<string, unknown> = {};
  for (const { name, key } of SETTINGS) {
    const value = opts[camel(name)];
    if (value !== undefined) patch[key] = key === 'notifyPreview' ? value === 'on' : value;
  }
  if (typeof opts['secretFile'] === 'string') patch[SECRET.key] = await readSecret(opts['secretFile']);
  for (const name of (opts['clear'] as string[] | undefined) ?? []) {
    const key = name === SECRET.name ? SECRET.key : SETTINGS.find((s) => s.name === name)?.key;
    if (key === undefined) throw new UsageError(`hooks set --clear: unknown setting "${name}"; any of ${CLEARABLE.join(', ')}`);
    if (patch[key] !== undefined && patch[key] !== null) throw new UsageError(`hooks set: ${name} is both set and cleared`);
    patch[key] = null;
  }
  return patch;
}

/** The file's text without surrounding whitespace (the newline `echo` adds); "-" reads stdin. */
async function readSecret(path: string): Promise<string> {
  let text: string;
  try {
    text = path === '-' ? await readStdin() : await readFile(path, 'utf8');
  } catch (err) {
    throw new CliError(`--secret-file: cannot read ${path} (${(err as NodeJS.ErrnoException).code ?? 'unreadable'})`, EXIT.failure);
  }
  const secret = text.trim();
  if (secret === '') throw new UsageError(`--secret-file: ${path === '-' ? 'stdin' : path} is empty`);
  return secret;
}

async function readStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(Buffer.from(chunk as Uint8Array));
  return Buffer.concat(chunks).toString('utf8');
}

function describeHooks(view: HooksView): string {
  const rows = [...SETTINGS, SECRET].map(({ name, key }) => {
    const own = key === SECRET.key ? view.override.secretSet : view.override[key] !== undefined;
    const value = key === SECRET.key ? (view.hooks.secretSet ? 'set' : 'not set (calls are unsigned)') : shown(view.hooks[key]);
    return [name, value, own ? 'tenant' : 'default'];
  });
  return `tenant ${view.tenant} (settings version ${view.version})\n${table(['setting', 'in force', 'from'], rows)}`;
}

function shown(value: string | number | boolean | undefined): string {
  if (value === undefined) return '-';
  if (typeof value === 'boolean') return value ? 'on' : 'off';
  return String(value);
}

function camel(flagName: string): string {
  return flagName.replace(/-([a-z])/g, (_, c: string) => c.toUpperCase());
}
