/** Splits a CQL script into statements: drops comments, splits on `;` outside string literals. */
export function splitStatements(script: string): string[] {
  const statements: string[] = [];
  let current = '';
  for (let i = 0; i < script.length; i++) {
    const ch = script[i];
    const next = script[i + 1];
    if (ch === "'" || ch === '"') {
      const end = closingQuote(script, i, ch);
      current += script.slice(i, end + 1);
      i = end;
    } else if ((ch === '-' && next === '-') || (ch === '/' && next === '/')) {
      const end = script.indexOf('\n', i);
      i = end < 0 ? script.length : end - 1;
    } else if (ch === '/' && next === '*') {
      const end = script.indexOf('*/', i + 2);
      if (end < 0) throw new Error('unterminated block comment in CQL script');
      i = end + 1;
    } else if (ch === ';') {
      statements.push(current);
      current = '';
    } else {
      current += ch;
    }
  }
  statements.push(current);
  return statements.map((s) => s.trim()).filter((s) => s.length > 0);
}

/** Index of the quote closing the literal that opens at `start` ('' and "" are escapes). */
function closingQuote(script: string, start: number, quote: string): number {
  for (let i = start + 1; i < script.length; i++) {
    if (script[i] !== quote) continue;
    if (script[i + 1] === quote) i++;
    else return i;
  }
  throw new Error('unterminated string literal in CQL script');
}
