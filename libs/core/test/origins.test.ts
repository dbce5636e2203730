/**
 * SEQLINE_ALLOWED_ORIGINS as both modes read it: unset or blank is "not configured", a list of
 * origins is kept (normalised), and a value that would allow no browser at all is a problem,
 * never a silent "nothing allowed".
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { normaliseOrigin, readOriginList } from '../src/index.ts';

const originArb = fc
  .tuple(
    fc.constantFrom('http', 'https', 'capacitor', 'chrome-extension'),
    fc.domain(),
    fc.option(fc.integer({ min: 1, max: 65535 }), { nil: undefined }),
  )
  .map(([scheme, host, port]) => `${scheme}://${host}${port === undefined ? '' : `:${port}`}`);

describe('readOriginList', () => {
  it.each([undefined, '', ' ', '\t \n'])('%j is not configured', (value) => {
    expect(readOriginList(value)).toEqual({ ok: true, origins: undefined });
  });

  it('keeps each origin, normalised (case, spaces, a trailing slash), and "*"', () => {
    expect(readOriginList(' https://App.Example.com/ ,http://localhost:8080,*')).toEqual({
      ok: true,
      origins: ['https://app.example.com', 'http://localhost:8080', '*'],
    });
    expect(readOriginList('http://[::1]:8080')).toEqual({ ok: true, origins: ['http://[::1]:8080'] });
  });

  it('ignores empty entries between commas beside real ones', () => {
    expect(readOriginList('https://a.example,,https://b.example,')).toEqual({
      ok: true,
      origins: ['https://a.example', 'https://b.example'],
    });
  });

  it.each([',', ' , ,', ',,,'])('%j names no origin: a problem, not "nothing allowed"', (value) => {
    const read = readOriginList(value);
    expect(read.ok).toBe(false);
    if (!read.ok) expect(read.problem).toMatch(/names no origin/);
  });

  it.each([
    'localhost:8080',
    'app.example.com',
    'https://app.example.com/chat',
    'https://app.example.com?x=1',
    'https://user@app.example.com',
    'null',
    'https://',
    '//app.example.com',
    'https://app example.com',
  ])('%j is not an origin a browser sends: refused, named in the problem', (entry) => {
    const read = readOriginList(`https://ok.example,${entry}`);
    expect(read.ok).toBe(false);
    if (!read.ok) expect(read.problem).toContain(JSON.stringify(entry));
  });

  it('property: any list of origins is read back as the normalised origins, in order', () => {
    fc.assert(
      fc.property(fc.array(originArb, { minLength: 1, maxLength: 6 }), fc.boolean(), (origins, untidy) => {
        const text = origins.map((o) => (untidy ? ` ${o.toUpperCase()}/ ` : o)).join(',');
        expect(readOriginList(text)).toEqual({ ok: true, origins: origins.map(normaliseOrigin) });
      }),
    );
  });
});

describe('normaliseOrigin', () => {
  it('property: idempotent, and case, surrounding spaces and trailing slashes do not matter', () => {
    fc.assert(
      fc.property(originArb, (origin) => {
        const once = normaliseOrigin(origin);
        expect(normaliseOrigin(once)).toBe(once);
        expect(normaliseOrigin(`  ${origin.toUpperCase()}//`)).toBe(once);
      }),
    );
  });
});
