/** Load measurement for admission control: event-loop lag and requests in flight. */
import { monitorEventLoopDelay, type IntervalHistogram } from 'node:perf_hooks';
import { LoadShedder, type SheddingPolicy } from '@seqline/core';

const RESOLUTION_MS = 10;
const WINDOW_MS = 1000;
const SAMPLE_MS = 100;

/**
 * Mean event-loop delay over the last full window, or over the current one when that is worse
 * (sustained overload is seen within a window; one slow request — a 5 000-member group.create
 * — barely moves a mean, where a p99 would shed work for a whole window after it). The
 * histogram's samples include the sampling interval itself, which is subtracted.
 *
 * The current window's mean is read every SAMPLE_MS, not per request: a histogram's mean walks
 * all its buckets (2.3 % of a gateway's CPU at 1 000 msg/s when read per request).
 */
class LoopLagMonitor {
  private readonly histogram: IntervalHistogram;
  private lastWindowMs = 0;
  private currentWindowMs = 0;
  private sampled = 0;

  constructor() {
    this.histogram = monitorEventLoopDelay({ resolution: RESOLUTION_MS });
    this.histogram.enable();
    setInterval(() => {
      if (++this.sampled < WINDOW_MS / SAMPLE_MS) {
        this.currentWindowMs = this.currentMs();
        return;
      }
      this.sampled = 0;
      this.lastWindowMs = this.currentMs();
      this.currentWindowMs = 0;
      this.histogram.reset();
    }, SAMPLE_MS).unref();
  }

  lagMs(): number {
    return Math.max(this.lastWindowMs, this.currentWindowMs);
  }

  private currentMs(): number {
    // A few samples are not a trend: the first ones of a window are judged with the last window.
    if (this.histogram.count < 10) return 0;
    return Math.max(0, this.histogram.mean / 1e6 - RESOLUTION_MS);
  }
}

let shared: LoopLagMonitor | undefined;

/** One monitor per process (its timer is unref'd: it never keeps the process alive). */
export function processLoopLagMs(): number {
  shared ??= new LoopLagMonitor();
  return shared.lagMs();
}

/** Counts requests in flight; `track` wraps one. */
export class InFlightCounter {
  current = 0;
  async track<T>(work: () => Promise<T>): Promise<T> {
    this.current++;
    try {
      return await work();
    } finally {
      this.current--;
    }
  }
}

export function createShedder(inFlight: InFlightCounter, lagMs: () => number, policy?: SheddingPolicy): LoadShedder {
  return new LoadShedder(() => ({ lagMs: lagMs(), inFlight: inFlight.current }), policy);
}
