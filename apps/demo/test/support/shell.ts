/**
 * Commands run the way a person runs them from the README: through bash, from the repo root, in
 * an environment with nothing of the test runner's in it (no Seqline settings, no vitest or npm
 * variables, no NODE_OPTIONS), on the Node that runs the tests.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createServer } from 'node:net';
import { dirname } from 'node:path';
import { REPO_ROOT } from './readme.ts';

const RUNNER_VARIABLES = /^(SEQLINE_|VITEST|npm_|NODE_OPTIONS$|NODE_ENV$|PORT$|HOST$|LOG_LEVEL$|UWS_USE_FALLBACK$|TEST$)/;

/** The test process's environment without the runner's variables; its Node first on PATH. */
export function userEnv(): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [key, value] of Object.entries(process.env)) if (!RUNNER_VARIABLES.test(key)) env[key] = value;
  env['PATH'] = `${dirname(process.execPath)}:${process.env['PATH'] ?? ''}`;
  return env;
}

/** True when nothing listens on the port (on any address, as the server binds 0.0.0.0). */
export function portIsFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const probe = createServer();
    probe.once('error', () => resolve(false));
    probe.listen({ port, host: '0.0.0.0', exclusive: true }, () => probe.close(() => resolve(true)));
  });
}

export interface RunningCommand {
  readonly pid: number;
  output(): string;
  /** Resolves with the first match of `pattern` in the output; rejects on exit or past the timeout. */
  waitFor(pattern: RegExp, timeoutMs: number): Promise<RegExpExecArray>;
  /** Ctrl-C: SIGINT to the command's process group; resolves when every process it started has exited. */
  interrupt(timeoutMs: number): Promise<void>;
}

/** Starts `command` in bash in its own process group (so Ctrl-C reaches npm and the server it runs). */
export function startCommand(command: string): RunningCommand {
  const child: ChildProcess = spawn('bash', ['-c', command], {
    cwd: REPO_ROOT,
    env: userEnv(),
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const pid = child.pid;
  if (pid === undefined) throw new Error(`${command}: not started`);
  let output = '';
  const listeners = new Set<() => void>();
  const onData = (chunk: Buffer) => {
    output += chunk.toString();
    for (const listener of listeners) listener();
  };
  child.stdout?.on('data', onData);
  child.stderr?.on('data', onData);
  // 'close', not 'exit': the output pipes close once every process of the tree has exited (npm exits before the server it runs).
  const exited = new Promise<void>((resolve) => child.once('close', () => resolve()));
  let done = false;
  void exited.then(() => {
    done = true;
    for (const listener of listeners) listener();
  });
  return {
    pid,
    output: () => output,
    waitFor(pattern, timeoutMs) {
      return new Promise((resolve, reject) => {
        const stop = () => {
          listeners.delete(check);
          clearTimeout(timer);
        };
        const check = () => {
          const match = pattern.exec(output);
          if (match) {
            stop();
            resolve(match);
          } else if (done) {
            stop();
            reject(new Error(`${command} exited before ${pattern}:\n${output.slice(-4000)}`));
          }
        };
        const timer = setTimeout(() => {
          stop();
          reject(new Error(`${command}: no ${pattern} in ${timeoutMs} ms:\n${output.slice(-4000)}`));
        }, timeoutMs);
        listeners.add(check);
        check();
      });
    },
    async interrupt(timeoutMs) {
      if (done) return;
      process.kill(-pid, 'SIGINT');
      const killer = setTimeout(() => {
        if (!done) process.kill(-pid, 'SIGKILL');
      }, timeoutMs);
      await exited;
      clearTimeout(killer);
    },
  };
}

/** One command of a shell block and what it printed. */
export interface CommandOutput {
  command: string;
  stdout: string;
}

/**
 * Runs a README shell block as written, in one bash (`set -euo pipefail`: a failing command
 * fails the block), and splits its stdout by command: a DEBUG trap marks where each top-level
 * command starts (it does not reach into `$(…)`, whose output the command captures).
 */
export function runShellBlock(
  code: string,
  timeoutMs: number,
): Promise<{ status: number | null; outputs: CommandOutput[]; stderr: string }> {
  const MARK = '\u001e@seqline-readme-command@';
  const script = `set -euo pipefail\ntrap 'printf "\\n${MARK}%s\\n" "$BASH_COMMAND"' DEBUG\n${code}`;
  return new Promise((resolve, reject) => {
    const child = spawn('bash', ['-c', script], { cwd: REPO_ROOT, env: userEnv(), stdio: ['ignore', 'pipe', 'pipe'], timeout: timeoutMs });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.once('error', reject);
    child.once('close', (status) => {
      const outputs = stdout
        .split(`\n${MARK}`)
        .slice(1)
        .map((part) => {
          const newline = part.indexOf('\n');
          return { command: part.slice(0, newline), stdout: part.slice(newline + 1) };
        });
      resolve({ status, outputs, stderr });
    });
  });
}
