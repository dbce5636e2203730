/**
 * A one-line progress bar on stderr for long work (replay --all, schema migrate). Only when
 * stderr is a terminal: scripts and pipes get clean output and no control characters.
 */
export interface ProgressStream {
  isTTY?: boolean;
  columns?: number;
  write(text: string): boolean;
}

const WIDTH = 30;

export class ProgressBar {
  private done = 0;
  private readonly enabled: boolean;

  constructor(
    private readonly label: string,
    private total: number,
    private readonly stream: ProgressStream = process.stderr,
  ) {
    this.enabled = stream.isTTY === true;
    this.draw('');
  }

  /** Advances by `n` and shows `detail` (e.g. the item just finished). */
  tick(detail = '', n = 1): void {
    this.done = Math.min(this.total, this.done + n);
    this.draw(detail);
  }

  setTotal(total: number): void {
    this.total = total;
    this.draw('');
  }

  /** Leaves the final state on its own line. */
  finish(): void {
    if (this.enabled) this.stream.write('\n');
  }

  private draw(detail: string): void {
    if (!this.enabled) return;
    const ratio = this.total === 0 ? 1 : this.done / this.total;
    const filled = Math.round(ratio * WIDTH);
    const line = `${this.label} [${'#'.repeat(filled)}${'-'.repeat(WIDTH - filled)}] ${this.done}/${this.total} ${detail}`;
    // A pseudo-terminal may report 0 columns: then assume a common width.
    const max = (this.stream.columns !== undefined && this.stream.columns > 0 ? this.stream.columns : 100) - 1;
    this.stream.write(`\r\x1b[2K${line.length > max ? line.slice(0, max) : line}`);
  }
}
