/**
 * The README as the tests read it: a section by its `##` title, its fenced code blocks, and
 * the shell commands of a block (comment lines dropped, `\` continuations joined), so the
 * tests run what the README says instead of a copy that could drift from it.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const REPO_ROOT = fileURLToPath(new URL('../../../../', import.meta.url));

export function readRepoFile(path: string): string {
  return readFileSync(join(REPO_ROOT, path), 'utf8');
}

/** The text under `## <title>` up to the next `## ` heading. */
export function readmeSection(title: string, readme = readRepoFile('README.md')): string {
  const start = readme.indexOf(`\n## ${title}\n`);
  if (start < 0) throw new Error(`README.md has no "## ${title}" section`);
  const body = readme.slice(start + title.length + 5);
  const end = body.search(/^## /m);
  return end < 0 ? body : body.slice(0, end);
}

/** The fenced code blocks of a text, with their info string (`bash`, `` for none). */
export function codeBlocks(text: string): Array<{ lang: string; code: string }> {
  return [...text.matchAll(/^```([\w-]*)\n([\s\S]*?)^```$/gm)].map((m) => ({ lang: m[1] ?? '', code: m[2] ?? '' }));
}

/** The commands of a shell block: blank and comment lines dropped, continued lines joined as written. */
export function shellCommands(code: string): string[] {
  const commands: string[] = [];
  let pending = '';
  for (const line of code.split('\n')) {
    if (pending === '' && (line.trim() === '' || line.trimStart().startsWith('#'))) continue;
    pending += pending === '' ? line : `\n${line}`;
    if (!line.endsWith('\\')) {
      commands.push(pending);
      pending = '';
    }
  }
  if (pending !== '') commands.push(pending);
  return commands;
}

/** A command without a trailing ` # comment` (one outside quotes), trimmed. */
export function withoutComment(command: string): string {
  let quote: string | null = null;
  for (let i = 0; i < command.length; i += 1) {
    const c = command[i];
    if (quote !== null) {
      if (c === quote) quote = null;
    } else if (c === "'" || c === '"') quote = c;
    else if (c === '#' && (i === 0 || /\s/.test(command[i - 1] ?? ''))) return command.slice(0, i).trim();
  }
  return command.trim();
}

/** The README's links of the form <http://…>, in order. */
export function linkedUrls(text: string): string[] {
  return [...text.matchAll(/<(https?:\/\/[^>\s]+)>/g)].map((m) => m[1] ?? '');
}
