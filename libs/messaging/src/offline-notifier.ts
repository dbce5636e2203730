/**
 * Offline notifications, coalesced at the inbox owner (docs/decisions.md, "Offline
 * notifications"). The owner is the one process that sees every append to an inbox, in both
 * modes, so a window kept here gives exactly one notification per user per window however many
 * workers run. The notifier is the owner's append listener: for a tenant with a notifyUrl, the
 * notifying entries (core's notifyItemsOf) of a user with no live socket open a window of
 * `notifyWindowMs` or join the open one; when it closes, one durable job goes on `hooks.notify`
 * if the user is still offline, and nothing if they came online.
 *
 * Bounded: at most `maxWindows` open windows (at the bound the oldest closes early) and
 * `maxItemsPerWindow` items kept per window (the rest are counted, not sent: the badge still
 * counts them). A window lives in memory only: if the process dies inside one, that window's
 * notification is lost — never a message, and the next notification carries the full badge.
 */
import {
  notifyItemsOf,
  offlineNotifyJobId,
  splitKey,
  type Entry,
  type InboxKey,
  type Logger,
  type NotifyItem,
  type PushBus,
  type WorkQueue,
} from '@seqline/core';
import type { MessagingHooks } from './deps.ts';
import { OFFLINE_NOTIFY_QUEUE, toJson, type OfflineNotifyJob } from './queues.ts';

export const DEFAULT_MAX_NOTIFY_WINDOWS = 100_000;
export const DEFAULT_MAX_NOTIFY_ITEMS = 100;

export interface OfflineNotifierDeps {
  queue: Pick<WorkQueue, 'enqueue'>;
  hooks: Pick<MessagingHooks, 'of'>;
  /** Who has a live socket; undefined (cannot know yet) counts as offline: a spurious notification beats a lost one. */
  presence: Pick<PushBus, 'isOnline'>;
  logger: Logger;
  /** Most windows open at once. Default 100 000. */
  maxWindows?: number;
  /** Most items one notification carries. Default 100. */
  maxItemsPerWindow?: number;
}

export interface OfflineNotifierStats {
  open: number;
  /** Jobs enqueued. */
  enqueued: number;
  /** Windows that closed with the user online: nothing sent. */
  droppedOnline: number;
  /** Items past maxItemsPerWindow, counted in the badge only. */
  itemsOmitted: number;
  /** Windows closed early because maxWindows was reached. */
  closedEarly: number;
  /** Enqueues that failed (the notification is lost; the messages are not). */
  failed: number;
}

interface Window {
  inbox: InboxKey;
  tenant: string;
  user: string;
  items: NotifyItem[];
  omitted: number;
  timer: NodeJS.Timeout | undefined;
}

export class OfflineNotifier {
  /** Insertion order is opening order: the first is the oldest (closed early at the bound). */
  private readonly windows = new Map<InboxKey, Window>();
  private readonly inFlight = new Set<Promise<void>>();
  private readonly maxWindows: number;
  private readonly maxItems: number;
  private readonly counters = { enqueued: 0, droppedOnline: 0, itemsOmitted: 0, closedEarly: 0, failed: 0 };
  private closed = false;
  private readonly logger: Logger;

  /** The InboxOwner's `onAppended`. */
  readonly listener = (inbox: InboxKey, entries: Entry[]): void => this.onAppended(inbox, entries);

  constructor(private readonly deps: OfflineNotifierDeps) {
    this.maxWindows = deps.maxWindows ?? DEFAULT_MAX_NOTIFY_WINDOWS;
    this.maxItems = deps.maxItemsPerWindow ?? DEFAULT_MAX_NOTIFY_ITEMS;
    this.logger = deps.logger.child({ component: 'offline-notifier' });
  }

  onAppended(inbox: InboxKey, entries: Entry[]): void {
    const { tenant, id: user } = splitKey(inbox);
    const hooks = this.deps.hooks.of(tenant);
    if (hooks.notifyUrl === undefined) return;
    // Previews are taken only while the tenant allows them (and dropped at delivery if it stopped).
    const items = notifyItemsOf(user, entries, { preview: hooks.notifyPreview });
    if (items.length === 0) return;
    // Online: the push has reached a socket. A window already open still decides when it closes.
    if (this.deps.presence.isOnline(inbox) === true && !this.windows.has(inbox)) return;
    let window = this.windows.get(inbox);
    if (!window) {
      if (this.windows.size >= this.maxWindows) this.closeOldest();
      window = { inbox, tenant, user, items: [], omitted: 0, timer: undefined };
      this.windows.set(inbox, window);
      if (this.closed) {
        this.add(window, items);
        return this.closeWindow(window);
      }
      const w = window;
      w.timer = setTimeout(() => this.closeWindow(w), hooks.notifyWindowMs);
      w.timer.unref(); // shutdown flushes (close)
    }
    this.add(window, items);
  }

  /** Closes every open window now (each enqueued if its user is offline), and waits for the enqueues. */
  async flush(): Promise<void> {
    for (const window of [...this.windows.values()]) this.closeWindow(window);
    while (this.inFlight.size > 0) await Promise.all(this.inFlight);
  }

  /** Flushes, and from now on enqueues at once (no window): call before the queue closes. */
  async close(): Promise<void> {
    this.closed = true;
    await this.flush();
  }

  stats(): OfflineNotifierStats {
    return { open: this.windows.size, ...this.counters };
  }

  private add(window: Window, items: NotifyItem[]): void {
    const room = Math.max(0, this.maxItems - window.items.length);
    window.items.push(...items.slice(0, room));
    const omitted = items.length - Math.min(room, items.length);
    window.omitted += omitted;
    this.counters.itemsOmitted += omitted;
  }

  private closeOldest(): void {
    const oldest = this.windows.values().next();
    if (oldest.done) return;
    this.counters.closedEarly++;
    this.closeWindow(oldest.value);
  }

  private closeWindow(window: Window): void {
    if (this.windows.get(window.inbox) !== window) return;
    this.windows.delete(window.inbox);
    if (window.timer) clearTimeout(window.timer);
    const first = window.items[0];
    if (!first) return;
    if (this.deps.presence.isOnline(window.inbox) === true) {
      this.counters.droppedOnline++;
      return;
    }
    const job: OfflineNotifyJob = { tenant: window.tenant, user: window.user, entries: window.items };
    const id = offlineNotifyJobId({ tenant: window.tenant, user: window.user, firstSeq: first.seq });
    // From a microtask: a queue that throws synchronously is caught like one that rejects.
    const enqueue = Promise.resolve()
      .then(() => this.deps.queue.enqueue(OFFLINE_NOTIFY_QUEUE, id, toJson(job)))
      .then(
        () => {
          this.counters.enqueued++;
        },
        (err: unknown) => {
          this.counters.failed++;
          this.logger.error(
            { err, tenant: window.tenant, user: window.user, items: window.items.length },
            'offline notification not enqueued',
          );
        },
      );
    this.inFlight.add(enqueue);
    void enqueue.finally(() => this.inFlight.delete(enqueue));
    if (window.omitted > 0)
      this.logger.info({ tenant: window.tenant, user: window.user, omitted: window.omitted }, 'notification items past the bound');
  }
}
