/**
 * Preloaded into a process under test (NODE_OPTIONS=--import=<this file>) by the campaign:
 * Date.now follows an offset in milliseconds read from
 * `$SEQLINE_CAMPAIGN_CLOCK_DIR/<SEQLINE_OWNER_ID or "server">.offset`, re-read every 50 ms, so
 * the campaign can jump this process's wall clock while it runs. Monotonic clocks
 * (performance.now, which leases use) are left alone: a wall-clock jump must not move them.
 */
import { readFileSync } from 'node:fs';

const dir = process.env.SEQLINE_CAMPAIGN_CLOCK_DIR;
if (dir) {
  const file = `${dir}/${process.env.SEQLINE_OWNER_ID ?? 'server'}.offset`;
  const realNow = Date.now.bind(Date);
  let offset = 0;
  // No file is offset 0; a file that does not parse keeps the last offset (the campaign renames
  // whole files into place, so this is a guard, not the rule).
  const read = () => {
    let text;
    try {
      text = readFileSync(file, 'utf8').trim();
    } catch {
      offset = 0;
      return;
    }
    const value = Number(text);
    if (text !== '' && Number.isFinite(value)) offset = value;
  };
  read();
  setInterval(read, 50).unref();
  Date.now = () => realNow() + offset;
}
