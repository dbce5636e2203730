/**
 * A reader for the YAML docker-compose.yml is written in, for the tests that hold it against the
 * README (no YAML parser is among the dependencies, and one is not worth adding for a test).
 * It knows block mappings indented by spaces, flow sequences and mappings (`[a, 'b']`,
 * `{ k: v }`), single- and double-quoted and plain scalars (all read as strings), comments,
 * anchors, aliases and the `<<` merge key — and throws on anything else (block sequences,
 * multi-line scalars, tabs), so a construct it does not know is never misread.
 */
export type YamlValue = string | YamlValue[] | { [key: string]: YamlValue };
type YamlMap = { [key: string]: YamlValue };

interface Line {
  indent: number;
  text: string;
  number: number;
}

export function parseComposeYaml(source: string): YamlMap {
  const lines: Line[] = [];
  source.split('\n').forEach((raw, i) => {
    if (raw.includes('\t')) throw new Error(`line ${i + 1}: a tab`);
    const text = stripComment(raw).trimEnd();
    if (text.trim() === '') return;
    lines.push({ indent: text.length - text.trimStart().length, text: text.trim(), number: i + 1 });
  });
  const anchors = new Map<string, YamlValue>();
  const at = { index: 0 };
  const root = readBlock(lines, at, 0, anchors);
  if (at.index < lines.length) throw new Error(`line ${lines[at.index]?.number}: unexpected indentation`);
  return root;
}

/** A block mapping whose keys sit at exactly `indent`. */
function readBlock(lines: Line[], at: { index: number }, indent: number, anchors: Map<string, YamlValue>): YamlMap {
  const map: YamlMap = {};
  const explicit = new Set<string>();
  for (let line = lines[at.index]; line !== undefined && line.indent === indent; line = lines[at.index]) {
    if (line.text.startsWith('- ') || line.text === '-') throw new Error(`line ${line.number}: block sequences are not read here`);
    const match = /^([A-Za-z0-9_.<-]+|'[^']*'|"[^"]*"):(?:\s+(.*))?$/.exec(line.text);
    if (!match?.[1]) throw new Error(`line ${line.number}: not a "key: value" line: ${line.text}`);
    const key = match[1].replace(/^['"]|['"]$/g, '');
    let rest = match[2] ?? '';
    at.index += 1;
    let anchor: string | undefined;
    const anchored = /^&([A-Za-z0-9_-]+)\s*(.*)$/.exec(rest);
    if (anchored?.[1]) {
      anchor = anchored[1];
      rest = anchored[2] ?? '';
    }
    let value: YamlValue;
    if (rest === '') {
      const next = lines[at.index];
      value = next !== undefined && next.indent > indent ? readBlock(lines, at, next.indent, anchors) : '';
    } else {
      if (/^[|>]/.test(rest)) throw new Error(`line ${line.number}: multi-line scalars are not read here`);
      value = readFlow(rest, line.number, anchors);
    }
    if (anchor !== undefined) anchors.set(anchor, value);
    if (key === '<<') {
      // Merged keys never override the mapping's own, written before or after.
      if (typeof value !== 'object' || Array.isArray(value)) throw new Error(`line ${line.number}: << needs a mapping`);
      for (const [k, v] of Object.entries(value)) if (!explicit.has(k)) map[k] = v;
    } else {
      if (explicit.has(key)) throw new Error(`line ${line.number}: key ${key} repeated`);
      explicit.add(key);
      map[key] = value;
    }
  }
  return map;
}

/** A value written on one line: an alias, a flow collection or a scalar. */
function readFlow(text: string, lineNumber: number, anchors: Map<string, YamlValue>): YamlValue {
  const reader = { text, pos: 0, lineNumber, anchors };
  const value = readFlowValue(reader, false);
  skipSpaces(reader);
  if (reader.pos !== text.length) throw new Error(`line ${lineNumber}: unexpected ${JSON.stringify(text.slice(reader.pos))}`);
  return value;
}

interface FlowReader {
  text: string;
  pos: number;
  lineNumber: number;
  anchors: Map<string, YamlValue>;
}

function readFlowValue(r: FlowReader, inFlow: boolean): YamlValue {
  skipSpaces(r);
  const c = r.text[r.pos];
  if (c === '[') {
    r.pos += 1;
    const items: YamlValue[] = [];
    for (;;) {
      skipSpaces(r);
      if (r.text[r.pos] === ']') {
        r.pos += 1;
        return items;
      }
      items.push(readFlowValue(r, true));
      skipSpaces(r);
      if (r.text[r.pos] === ',') r.pos += 1;
      else if (r.text[r.pos] !== ']') throw new Error(`line ${r.lineNumber}: expected , or ] in a flow sequence`);
    }
  }
  if (c === '{') {
    r.pos += 1;
    const map: YamlMap = {};
    for (;;) {
      skipSpaces(r);
      if (r.text[r.pos] === '}') {
        r.pos += 1;
        return map;
      }
      const key = readScalar(r, true, true);
      skipSpaces(r);
      if (r.text[r.pos] !== ':') throw new Error(`line ${r.lineNumber}: expected : in a flow mapping`);
      r.pos += 1;
      map[key] = readFlowValue(r, true);
      skipSpaces(r);
      if (r.text[r.pos] === ',') r.pos += 1;
      else if (r.text[r.pos] !== '}') throw new Error(`line ${r.lineNumber}: expected , or } in a flow mapping`);
    }
  }
  if (c === '*') {
    const name = /^\*([A-Za-z0-9_-]+)/.exec(r.text.slice(r.pos))?.[1];
    const value = name === undefined ? undefined : r.anchors.get(name);
    if (name === undefined || value === undefined) throw new Error(`line ${r.lineNumber}: unknown alias`);
    r.pos += name.length + 1;
    return value;
  }
  return readScalar(r, inFlow, false);
}

function readScalar(r: FlowReader, inFlow: boolean, isKey: boolean): string {
  const c = r.text[r.pos];
  if (c === "'") {
    let out = '';
    for (r.pos += 1; r.pos < r.text.length; r.pos += 1) {
      if (r.text[r.pos] !== "'") {
        out += r.text[r.pos];
      } else if (r.text[r.pos + 1] === "'") {
        out += "'"; // '' is a quote inside '…'
        r.pos += 1;
      } else {
        r.pos += 1;
        return out;
      }
    }
    throw new Error(`line ${r.lineNumber}: unterminated '`);
  }
  if (c === '"') {
    const end = /^"(?:[^"\\]|\\.)*"/.exec(r.text.slice(r.pos))?.[0];
    if (end === undefined) throw new Error(`line ${r.lineNumber}: unterminated "`);
    r.pos += end.length;
    return JSON.parse(end) as string;
  }
  // A plain scalar ends at a flow indicator inside a flow collection, or at ": " for a key.
  const stop = inFlow ? (isKey ? /[,\]}:]/ : /[,\]}]/) : /$^/;
  let end = r.pos;
  while (end < r.text.length && !stop.test(r.text[end] ?? '')) end += 1;
  const value = r.text.slice(r.pos, end).trim();
  if (value === '') throw new Error(`line ${r.lineNumber}: empty value`);
  if (/^[&!%@`]/.test(value)) throw new Error(`line ${r.lineNumber}: ${value[0]} is not read here`);
  r.pos = end;
  return value;
}

function skipSpaces(r: FlowReader): void {
  while (r.text[r.pos] === ' ') r.pos += 1;
}

/** The line without its comment: a `#` at the start or after a space, outside quoted scalars. */
function stripComment(line: string): string {
  let quote: string | null = null;
  for (let i = 0; i < line.length; i += 1) {
    const c = line[i];
    const before = i === 0 ? ' ' : (line[i - 1] ?? ' ');
    if (quote !== null) {
      if (c === '\\' && quote === '"') i += 1;
      else if (c === "'" && quote === "'" && line[i + 1] === "'")
        i += 1; // '' is a quote inside '…'
      else if (c === quote) quote = null;
    } else if ((c === "'" || c === '"') && ' [{,'.includes(before))
      quote = c; // opens a scalar only where one can start
    else if (c === '#' && before === ' ') return line.slice(0, i);
  }
  return line;
}
