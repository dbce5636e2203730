/**
 * One user's demo page in its own browser context, its WebSocket routed through a tap that
 * passes frames on unchanged until told to cut the line, stay offline, or lose one reply.
 */
import type { Browser, BrowserContext, Page, WebSocketRoute } from 'playwright-core';

export type Frame = Record<string, unknown> & { id?: number | null; op?: string };

const parse = (message: string | Buffer): Frame | null => {
  try {
    const value: unknown = JSON.parse(String(message));
    return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Frame) : null;
  } catch {
    return null;
  }
};

/** The page's sockets as the browser opened them, and what went through them. */
export class SocketTap {
  /** Every socket URL the page opened (the token is in its query). */
  readonly urls: string[] = [];
  /** Client → server frames, in order, over every connection. */
  readonly sent: Frame[] = [];
  /** Set: new sockets are closed at once (the page is offline). */
  offline = false;
  /** When it returns true for a server → client frame, that frame is dropped and the line cut. */
  loseReply: ((frame: Frame) => boolean) | null = null;
  private readonly links = new Set<{ ws: WebSocketRoute; server: WebSocketRoute }>();

  attach(ws: WebSocketRoute): void {
    this.urls.push(ws.url());
    if (this.offline) return void ws.close({ code: 1001, reason: 'offline (test)' });
    const server = ws.connectToServer();
    const link = { ws, server };
    this.links.add(link);
    ws.onMessage((message) => {
      const frame = parse(message);
      if (frame) this.sent.push(frame);
      server.send(message);
    });
    server.onMessage((message) => {
      const frame = parse(message);
      if (frame && this.loseReply?.(frame)) {
        this.loseReply = null;
        this.cut();
        return;
      }
      ws.send(message);
    });
  }

  /** Drops every open connection (both directions, as a dead network would). */
  cut(): void {
    for (const { ws, server } of this.links) {
      void server.close({ code: 1001, reason: 'line cut (test)' }).catch(() => undefined);
      void ws.close({ code: 1001, reason: 'line cut (test)' }).catch(() => undefined);
    }
    this.links.clear();
  }
}

export class DemoPage {
  readonly tap = new SocketTap();
  readonly errors: string[] = [];

  private constructor(
    readonly label: string,
    readonly context: BrowserContext,
    readonly page: Page,
  ) {}

  static async open(browser: Browser, baseUrl: string, label: string): Promise<DemoPage> {
    const context = await browser.newContext();
    const page = await context.newPage();
    const demo = new DemoPage(label, context, page);
    page.on('pageerror', (err) => demo.errors.push(String(err)));
    await page.routeWebSocket(/\/v1\/ws/, (ws) => demo.tap.attach(ws));
    await page.goto(baseUrl);
    return demo;
  }

  async signIn(user: string): Promise<void> {
    await this.page.fill('#user', user);
    await this.page.click('#signin-form button');
    await this.waitState('connected');
  }

  waitState(state: 'connected' | 'disconnected'): Promise<unknown> {
    return this.page.waitForSelector(`#status[data-state="${state}"]`, { timeout: 15_000 });
  }

  async openChat(peer: string): Promise<void> {
    await this.page.fill('#peer', peer);
    await this.page.click('#new-chat button');
  }

  async createGroup(name: string, members: string[]): Promise<string> {
    await this.page.fill('#group-name', name);
    await this.page.fill('#group-members', members.join(', '));
    await this.page.click('#new-group button');
    const button = await this.page.waitForSelector('#convs button[aria-current="true"][data-conv^="group:"]');
    return (await button.getAttribute('data-conv'))?.slice('group:'.length) ?? '';
  }

  /** Clicks a conversation of the list once it is there (it may arrive by push). */
  async select(convKey: string): Promise<void> {
    await this.page.click(`#convs button[data-conv="${convKey}"]`, { timeout: 15_000 });
  }

  /** Sends through the form and waits for the acknowledgement line; returns it. */
  async send(text: string): Promise<string> {
    await this.page.evaluate(() => {
      const p = document.getElementById('last-send');
      if (p) p.textContent = '';
    });
    await this.page.fill('#text', text);
    await this.page.press('#text', 'Enter');
    const line = await this.page.waitForSelector('#last-send:has-text("seq")', { timeout: 20_000 });
    return (await line.textContent()) ?? '';
  }

  /** The texts of the open chat's messages, in display order. */
  texts(): Promise<string[]> {
    return this.page.$$eval('#messages .msg .text', (els) => els.map((el) => el.textContent ?? ''));
  }

  /** Waits until the open chat shows exactly `texts` (a double or a gap would not match). */
  async waitTexts(texts: string[], timeout = 15_000): Promise<void> {
    try {
      await this.page.waitForFunction(
        (want) =>
          JSON.stringify([...document.querySelectorAll('#messages .msg .text')].map((el) => el.textContent)) === JSON.stringify(want),
        texts,
        { timeout },
      );
    } catch {
      throw new Error(`${this.label}: expected messages ${JSON.stringify(texts)}, shown ${JSON.stringify(await this.texts())}`);
    }
  }

  /** Waits until the list shows the conversation with these counts (the server's, as the SDK holds them). */
  async waitConv(convKey: string, counts: { unread: number; mentions: number }): Promise<void> {
    const selector = `#convs button[data-conv="${convKey}"][data-unread="${counts.unread}"][data-mentions="${counts.mentions}"]`;
    try {
      await this.page.waitForSelector(selector, { timeout: 15_000 });
    } catch {
      throw new Error(`${this.label}: expected ${convKey} with ${JSON.stringify(counts)}, list ${JSON.stringify(await this.convList())}`);
    }
  }

  /** The list as shown: conversation key with its unread and mention counts, top to bottom. */
  convList(): Promise<string[]> {
    return this.page.$$eval('#convs button', (els) =>
      els.map((el) => `${el.getAttribute('data-conv')} ${el.getAttribute('data-unread')}/${el.getAttribute('data-mentions')}`),
    );
  }

  /** Clicks a message's action button (delete, edit, recall) in the open chat. */
  async act(text: string, action: 'delete' | 'edit' | 'recall'): Promise<void> {
    await this.page.click(`#messages .msg:has(.text:text-is("${text}")) button.${action}`, { timeout: 15_000 });
  }

  /** Inbox seqs the SDK handed to the page, in order. */
  delivered(): Promise<number[]> {
    return this.page.evaluate(() => window.seqlineDemo?.delivered ?? []);
  }

  maxSeq(): Promise<number> {
    return this.page.evaluate(() => window.seqlineDemo?.maxSeq() ?? -1);
  }

  close(): Promise<void> {
    return this.context.close();
  }
}
