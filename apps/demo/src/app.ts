/**
 * The demo web client: sign in (dev token), the conversation list with the server's unread and
 * @-mention counts, a chat view with live pushes, read receipts, recall, edit, delete-for-me and
 * groups — all through the SDK, `@seqline/client`.
 * Everything shown is built with textContent (message bodies are other people's input).
 */
import { SeqlineClient, type Conv, type Conversation, type Entry } from '@seqline/client';
import { convKey, convTitle, isHidden, listItems, mentionsIn, renderList, textOf } from './conversation-list.ts';
import { ui } from './page-elements.ts';
import { isRecalled, readers, type Session } from './session.ts';

/** What the page exposes for a look from the devtools (and the browser tests). */
interface DemoDebug {
  user: string;
  /** Every inbox seq the SDK delivered, in delivery order (a double would show here). */
  delivered: number[];
  maxSeq(): number;
}
declare global {
  interface Window {
    seqlineDemo?: DemoDebug;
  }
}

let session: Session | null = null;

function showError(err: unknown): void {
  ui.error.textContent = err instanceof Error ? err.message : String(err);
}

async function fetchDevToken(user: string): Promise<string> {
  const res = await fetch('/dev/token', {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ user }),
  });
  const reply = (await res.json()) as { ok?: boolean; token?: unknown; error?: { message?: string } };
  if (!res.ok || typeof reply.token !== 'string') throw new Error(`sign-in refused: ${reply.error?.message ?? res.status}`);
  return reply.token;
}

async function signIn(user: string): Promise<void> {
  const token = await fetchDevToken(user);
  // The SDK adds /v1/ws and, in a browser, puts the token in the ?token= query parameter.
  const url = `${location.protocol === 'https:' ? 'wss' : 'ws'}://${location.host}`;
  // Each tab is a web device: under a tenant's `one-per-platform` policy a new tab signs the older out.
  const client = new SeqlineClient({ url, token, device: { dev: `tab-${Math.random().toString(36).slice(2, 10)}`, plat: 'web' } });
  const empty = { entries: [], opened: new Map(), groupNames: new Map(), read: new Set<number>(), marked: new Map() };
  const s: Session = { user, client, ...empty, editing: null, current: null };
  session = s;
  window.seqlineDemo = { user, delivered: [], maxSeq: () => client.maxSeq };
  // Kept over the states that follow a kick (disconnected, closed): the reason is what the user needs.
  let signedOut: string | null = null;
  client.on('state', (state) => {
    ui.status.dataset['state'] = state;
    ui.status.textContent = signedOut ?? state;
  });
  client.on('kicked', ({ by }) => {
    signedOut = `signed out: ${user} signed in on another ${by.plat ?? 'device'}`;
    ui.status.textContent = signedOut;
  });
  client.on('entries', (entries) => {
    window.seqlineDemo?.delivered.push(...entries.map((e) => e.seq));
    for (const entry of entries) {
      s.entries.push(entry);
      if (entry.kind === 'read' && entry.from === user) for (const seq of entry.seqs ?? [entry.referSeq ?? 0]) s.read.add(seq);
    }
    ui.maxSeq.textContent = String(client.maxSeq);
    render();
  });
  client.on('conversations', render);
  client.on('hidden', (h) => {
    s.entries = s.entries.filter((e) => !isHidden(e, h));
    render();
  });
  client.on('edited', ({ edit }) => {
    s.entries = s.entries.map((e) =>
      e.kind === 'msg' && e.appinfo === edit.appinfo ? { ...e, type: edit.type, body: edit.body, edit } : e,
    );
    render();
  });
  ui.me.textContent = user;
  ui.signin.hidden = true;
  ui.app.hidden = false;
  ui.footer.hidden = false;
  ui.signOut.hidden = false;
  await client.connect();
}

function signOut(): void {
  session?.client.close();
  session = null;
  delete window.seqlineDemo;
  ui.app.hidden = true;
  ui.footer.hidden = true;
  ui.signOut.hidden = true;
  ui.signin.hidden = false;
  ui.me.textContent = '';
  ui.status.dataset['state'] = 'signed-out';
  ui.status.textContent = 'signed out';
  ui.maxSeq.textContent = '0';
}

function convLabel(s: Session, conv: Conv, state = s.client.conversations().find((c) => convKey(c.conv) === convKey(conv))): string {
  return convTitle(conv, state, s.groupNames.get(conv.id));
}

function render(): void {
  const s = session;
  if (!s) return;
  const view = {
    current: s.current,
    label: (conv: Conv, state: Conversation | null) => convTitle(conv, state, s.groupNames.get(conv.id)),
    select,
  };
  renderList(ui.convs, listItems(s.client.conversations(), s.opened), view);
  renderChat(s);
}

function renderChat(s: Session): void {
  const conv = s.current;
  ui.text.disabled = conv === null;
  const sendButton = ui.sendForm.querySelector('button');
  if (sendButton) sendButton.disabled = conv === null;
  if (!conv) return;
  ui.chatTitle.textContent = convLabel(s, conv);
  const msgs = s.entries.filter((e) => e.kind === 'msg' && convKey(e.conv) === convKey(conv));
  ui.messages.replaceChildren(...msgs.map((msg) => messageItem(s, msg)));
  ui.messages.lastElementChild?.scrollIntoView({ block: 'end' });
  if (document.visibilityState === 'hidden') return;
  // Shown = read: the conversation's read cursor moves to its last message (the server's counts
  // follow), and the others' messages get a receipt once (a read by seqs, which their senders see).
  const state = s.client.conversations().find((c) => convKey(c.conv) === convKey(conv));
  if (state !== undefined && state.unread > 0 && s.marked.get(convKey(conv)) !== state.lastSeq) {
    s.marked.set(convKey(conv), state.lastSeq);
    s.client.markRead(conv).catch(showError);
  }
  const unread = msgs.filter((m) => m.from !== s.user && !s.read.has(m.seq) && !isRecalled(s, m)).map((m) => m.seq);
  if (unread.length === 0) return;
  for (const seq of unread) s.read.add(seq);
  s.client.read(unread).catch((err: unknown) => {
    for (const seq of unread) s.read.delete(seq);
    showError(err);
  });
}

function messageItem(s: Session, msg: Entry): HTMLLIElement {
  const li = document.createElement('li');
  const mine = msg.from === s.user;
  const recalled = isRecalled(s, msg);
  li.className = `msg${mine ? ' mine' : ''}${recalled ? ' recalled' : ''}`;
  li.dataset['seq'] = String(msg.seq);
  li.dataset['appinfo'] = msg.appinfo;
  li.append(Object.assign(document.createElement('span'), { className: 'from', textContent: msg.from }));
  li.append(Object.assign(document.createElement('span'), { className: 'text', textContent: recalled ? 'message recalled' : textOf(msg) }));
  if (msg.edit) li.append(Object.assign(document.createElement('span'), { className: 'meta edited', textContent: 'edited' }));
  li.append(action('delete', () => s.client.deleteForMe([msg.seq])));
  if (mine && !recalled) {
    li.append(action('recall', () => s.client.recall(msg.appinfo)));
    li.append(
      action('edit', async () => {
        s.editing = msg;
        ui.text.value = textOf(msg);
        ui.text.focus();
      }),
    );
    const by = readers(s, msg);
    li.append(
      Object.assign(document.createElement('span'), {
        className: 'meta read-by',
        textContent: by.length > 0 ? `read by ${by.join(', ')}` : 'sent',
      }),
    );
  }
  return li;
}

function action(name: string, run: () => Promise<unknown>): HTMLButtonElement {
  const button = Object.assign(document.createElement('button'), { type: 'button', className: name, textContent: name });
  button.addEventListener('click', () => void run().catch(showError));
  return button;
}

function select(conv: Conv): void {
  if (!session) return;
  session.current = conv;
  session.editing = null;
  ui.lastSend.textContent = '';
  render();
  ui.text.focus();
}

function open(conv: Conv): void {
  if (!session) return;
  session.opened.set(convKey(conv), conv);
  select(conv);
}

function on(form: HTMLFormElement, handle: () => Promise<void>): void {
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    ui.error.textContent = '';
    handle().catch(showError);
  });
}

on(ui.signinForm, () => signIn(ui.user.value.trim()));
ui.signOut.addEventListener('click', signOut);
on(ui.newChat, async () => {
  open({ type: 'user', id: ui.peer.value.trim() });
  ui.peer.value = '';
});
on(ui.newGroup, async () => {
  const s = session;
  if (!s) return;
  const name = ui.groupName.value.trim();
  const members = ui.groupMembers.value
    .split(',')
    .map((m) => m.trim())
    .filter((m) => m !== '' && m !== s.user);
  const created = await s.client.createGroup({ name, members });
  s.groupNames.set(created.group, name);
  ui.groupName.value = '';
  ui.groupMembers.value = '';
  open({ type: 'group', id: created.group });
});
on(ui.sendForm, async () => {
  const s = session;
  const conv = s?.current;
  if (!s || !conv) return;
  const text = ui.text.value;
  ui.text.value = '';
  const editing = s.editing;
  s.editing = null;
  if (editing) {
    ui.lastSend.textContent = `edited, seq ${(await s.client.edit(editing.appinfo, { text })).seq}`;
    return;
  }
  const to = conv.type === 'group' ? { group: conv.id } : { user: conv.id };
  const mentions = conv.type === 'group' ? mentionsIn(text) : [];
  // The SDK resends an unanswered send with the same appinfo: the server keeps one copy.
  const outcome = await s.client.send({ to, type: 'text', body: { text }, ...(mentions.length > 0 ? { mentions } : {}) });
  ui.lastSend.textContent = `sent, seq ${outcome.seq}${outcome.duplicate ? ' (resent: already stored once)' : ''}`;
  ui.lastSend.dataset['duplicate'] = String(outcome.duplicate);
});
