/** How results are printed: JSON for scripts (`--json`), aligned tables for people. */
export interface Output {
  json: boolean;
  write(text: string): void;
}

export function stdoutOutput(json: boolean): Output {
  return {
    json,
    write: (text) => {
      process.stdout.write(text);
    },
  };
}

/** Prints `data` as one JSON document, or calls `human` to print it for people. */
export function emit(out: Output, data: unknown, human: () => string): void {
  out.write(out.json ? `${JSON.stringify(data, null, 2)}\n` : ensureNewline(human()));
}

function ensureNewline(text: string): string {
  return text.endsWith('\n') ? text : `${text}\n`;
}

/** Columns padded to their widest cell; the last column is not padded. */
export function table(headers: string[], rows: Array<Array<string | number>>): string {
  const cells = [headers, ...rows.map((row) => row.map(String))];
  const widths = headers.map((_, i) => Math.max(...cells.map((row) => (row[i] ?? '').length)));
  return cells
    .map((row) =>
      row
        .map((cell, i) => (i === row.length - 1 ? cell : cell.padEnd(widths[i] ?? 0)))
        .join('  ')
        .trimEnd(),
    )
    .join('\n');
}

/** Two columns: a label and its value. */
export function keyValues(pairs: Array<[string, string | number | boolean]>): string {
  const width = Math.max(...pairs.map(([k]) => k.length));
  return pairs.map(([k, v]) => `${k.padEnd(width)}  ${String(v)}`).join('\n');
}

export function isoTime(ms: number): string {
  return Number.isFinite(ms) ? new Date(ms).toISOString() : String(ms);
}

/** One line of at most `max` characters (message bodies, errors). */
export function oneLine(text: string, max = 60): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length > max ? `${flat.slice(0, max - 1)}…` : flat;
}
