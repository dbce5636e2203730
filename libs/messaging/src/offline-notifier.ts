/**
 * Offline notifications, coalesced at the inbox owner (docs/decisions.md, "Offline
 * notifications"). The owner is the one process that sees every append to an inbox, in both
 * modes, so a window kept here gives exactly one notification per user per window however many
 * workers run. The notifier is the owner's append listener: for a tenant with a notifyUrl, the
 * notifying entries (core's notifyItemsOf) of a user with no live socket open a window of
 * `notifyWindowMs` or join the open one; when it closes, one durable job goes on `hooks.notify`
 * if the user is still offline, and nothing if they came online.
 *
 * Bounded (docs/decisions.md, "Offline notifications at the memory bound"): at most
 * `maxHeldItems` items held across all open windows (SEQLINE_MAX_NOTIFY_ITEMS), and so at most
 * that many windows (each holds one item or more). Items that would pass the bound close the
 * oldest windows early — each sends its notification now — so nothing is dropped: the cost is
 * a user notified twice within one window. Per window at most `maxItemsPerWindow` items are
 * kept (the rest are counted, not sent: the badge still counts them). A window lives in memory
 * only: if the process dies inside one, that window's notification is lost — never a message,
 * and the next notification carries the full badge.
 *
 * A closed window's notification is kept until the queue has stored its job: retried with
 * backoff while the notifier is open, tried once more at close() (offline-notify-sender.ts). Its
 * items count in the bound while it waits; past the bound with no window left to close, the
 * oldest waiting one is given up, logged and counted (`failed`).
 */
import {
  notifyItemsOf,
  offlineNotifyJobId,
  splitKey,
  type BackoffSchedule,
  type Entry,
  type InboxKey,
  type Logger,
  type NotifyItem,
  type PushBus,
  type WorkQueue,
} from '@seqline/core';
import type { MessagingHooks } from './deps.ts';
import { DEFAULT_NOTIFY_RETRY_BACKOFF, NotificationSender } from './offline-notify-sender.ts';
import type { OfflineNotifyJob } from './queues.ts';

/** Items held across all open windows (330–450 bytes of heap each): SEQLINE_MAX_NOTIFY_ITEMS's default. */
export const DEFAULT_MAX_HELD_NOTIFY_ITEMS = 100_000;
export const DEFAULT_MAX_ITEMS_PER_WINDOW = 100;

export interface OfflineNotifierDeps {
  queue: Pick<WorkQueue, 'enqueue'>;
  hooks: Pick<MessagingHooks, 'of'>;
  /** Who has a live socket; undefined (cannot know yet) counts as offline: a spurious notification beats a lost one. */
  presence: Pick<PushBus, 'isOnline'>;
  logger: Logger;
  /** Most items held across all open windows (and so most windows open). Default 100 000. */
  maxHeldItems?: number;
  /** Most items one notification carries (at most maxHeldItems). Default 100. */
  maxItemsPerWindow?: number;
  /** Delays between the enqueue attempts of one notification. Default DEFAULT_NOTIFY_RETRY_BACKOFF. */
  retryBackoff?: BackoffSchedule;
}

export interface OfflineNotifierStats {
  open: number;
  /** Items held in the open windows and in the notifications waiting to retry (at most maxHeldItems). */
  heldItems: number;
  /** Notifications whose enqueue failed, waiting to retry it. */
  retrying: number;
  /** Jobs enqueued. */
  enqueued: number;
  /** Windows that closed, or notifications due for a retry, with the user online: nothing sent. */
  droppedOnline: number;
  /** Items past maxItemsPerWindow, counted in the badge only. */
  itemsOmitted: number;
  /** Windows closed early (their notification sent at once) to keep heldItems within maxHeldItems. */
  closedEarly: number;
  /** Enqueue attempts that failed (each retried, unless counted in `failed`). */
  enqueueFailures: number;
  /** Notifications lost, each logged: not stored by the last try at close(), or given up at the bound (the messages are not lost). */
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
  private readonly sender: NotificationSender;
  readonly maxHeldItems: number;
  private readonly maxItems: number;
  /** Items in the open windows' `items` (the sender holds those of the notifications waiting to retry). */
  private windowItems = 0;
  private readonly counters = { droppedOnline: 0, itemsOmitted: 0, closedEarly: 0 };
  private closed = false;
  private readonly logger: Logger;

  /** The InboxOwner's `onAppended`. */
  readonly listener = (inbox: InboxKey, entries: Entry[]): void => this.onAppended(inbox, entries);

  constructor(private readonly deps: OfflineNotifierDeps) {
    this.maxHeldItems = deps.maxHeldItems ?? DEFAULT_MAX_HELD_NOTIFY_ITEMS;
    if (!Number.isSafeInteger(this.maxHeldItems) || this.maxHeldItems < 1) throw new RangeError(`bad maxHeldItems ${this.maxHeldItems}`);
    const perWindow = deps.maxItemsPerWindow ?? DEFAULT_MAX_ITEMS_PER_WINDOW;
    if (!Number.isSafeInteger(perWindow) || perWindow < 1) throw new RangeError(`bad maxItemsPerWindow ${perWindow}`);
    // So that one window alone always fits: making room can always succeed.
    this.maxItems = Math.min(perWindow, this.maxHeldItems);
    this.logger = deps.logger.child({ component: 'offline-notifier' });
    this.sender = new NotificationSender({
      queue: deps.queue,
      presence: deps.presence,
      logger: this.logger,
      retryBackoff: deps.retryBackoff ?? DEFAULT_NOTIFY_RETRY_BACKOFF,
      makeRoom: (items) => this.makeRoom(() => items),
    });
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
    this.makeRoom(() => this.keptOf(inbox, items.length));
    let window = this.windows.get(inbox);
    if (!window) {
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

  /**
   * Closes every open window now (each enqueued if its user is offline), and waits for the
   * enqueue attempts under way. A notification waiting to retry keeps its schedule.
   */
  async flush(): Promise<void> {
    for (const window of [...this.windows.values()]) this.closeWindow(window);
    await this.sender.settled();
  }

  /**
   * Call before the queue closes. Closes every open window, gives each notification waiting to
   * retry its last attempt now, and waits for every attempt: what is not stored then is logged
   * and counted in `failed`. Bounded by attempts: nothing retries once closed. From now on
   * notifications are enqueued at once (no window), once each.
   */
  async close(): Promise<void> {
    this.closed = true;
    for (const window of [...this.windows.values()]) this.closeWindow(window);
    await this.sender.close();
  }

  stats(): OfflineNotifierStats {
    const sent = this.sender.stats();
    return {
      open: this.windows.size,
      heldItems: this.windowItems + sent.heldItems,
      retrying: sent.retrying,
      enqueued: sent.enqueued,
      droppedOnline: this.counters.droppedOnline + sent.droppedOnline,
      itemsOmitted: this.counters.itemsOmitted,
      closedEarly: this.counters.closedEarly,
      enqueueFailures: sent.enqueueFailures,
      failed: sent.failed,
    };
  }

  private heldItems(): number {
    return this.windowItems + this.sender.heldItems;
  }

  /** Items of `count` the inbox's window (open or to be opened) would keep. */
  private keptOf(inbox: InboxKey, count: number): number {
    return Math.min(count, this.maxItems - (this.windows.get(inbox)?.items.length ?? 0));
  }

  /**
   * Makes `needed()` more items fit under maxHeldItems: closes the oldest windows early (each
   * sends its notification now), and with none left gives up the oldest notifications waiting
   * to retry. An appending inbox's own window may be among those closed: its new items then open
   * a new one (so `needed` is asked again each time). Ends: with nothing held, any window's or
   * notification's items fit (maxItems).
   */
  private makeRoom(needed: () => number): void {
    while (this.heldItems() + needed() > this.maxHeldItems) {
      if (this.windows.size > 0) this.closeOldest();
      else if (!this.sender.giveUpOldest()) return;
    }
  }

  private add(window: Window, items: NotifyItem[]): void {
    const room = Math.max(0, this.maxItems - window.items.length);
    window.items.push(...items.slice(0, room));
    this.windowItems += Math.min(room, items.length);
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
    this.windowItems -= window.items.length;
    if (window.timer) clearTimeout(window.timer);
    const first = window.items[0];
    if (!first) return;
    if (this.deps.presence.isOnline(window.inbox) === true) {
      this.counters.droppedOnline++;
      return;
    }
    const job: OfflineNotifyJob = { tenant: window.tenant, user: window.user, entries: window.items };
    const seqs = window.items.map((item) => item.seq);
    const id = offlineNotifyJobId({ tenant: window.tenant, user: window.user, firstSeq: Math.min(...seqs), lastSeq: Math.max(...seqs) });
    this.sender.send(window.inbox, id, job);
    if (window.omitted > 0)
      this.logger.info({ tenant: window.tenant, user: window.user, omitted: window.omitted }, 'notification items past the bound');
  }
}
