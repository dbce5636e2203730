/** Parses "90s", "30m", "24h", "7d" or a plain number of seconds into seconds. */
export function parseDuration(text: string): number {
  const m = /^(\d+(?:\.\d+)?)\s*(s|m|h|d)?$/.exec(text.trim());
  if (!m) throw new Error(`invalid duration "${text}" (use e.g. 90s, 30m, 24h, 7d)`);
  const n = Number(m[1]);
  const unit = { s: 1, m: 60, h: 3600, d: 86_400 }[(m[2] ?? 's') as 's' | 'm' | 'h' | 'd'];
  const seconds = n * unit;
  if (!(seconds > 0)) throw new Error(`duration must be positive: "${text}"`);
  return seconds;
}
