/**
 * The demo's conversation list: the SDK's `client.conversations()` as the server computed it
 * (unread and @-mention counts, last message), with chats opened here before they had any
 * message on top. The page counts nothing itself.
 */
import type { Conv, Conversation, Entry, HiddenEntries } from '@seqline/client';

export interface ListItem {
  conv: Conv;
  /** The server's state; null for a chat opened here that has no message yet. */
  state: Conversation | null;
}

export const convKey = (conv: Conv): string => `${conv.type}:${conv.id}`;

export const textOf = (entry: Entry): string => {
  const body = entry.body;
  if (typeof body === 'object' && body !== null && !Array.isArray(body) && typeof body['text'] === 'string') return body['text'];
  return JSON.stringify(body ?? null);
};

/** Server states, newest activity first; opened chats the server does not list yet go on top. */
export function listItems(states: readonly Conversation[], opened: ReadonlyMap<string, Conv>): ListItem[] {
  const listed = new Set(states.map((s) => convKey(s.conv)));
  const fresh = [...opened.values()]
    .filter((c) => !listed.has(convKey(c)))
    .reverse()
    .map((conv) => ({ conv, state: null }));
  return [...fresh, ...states.map((state) => ({ conv: state.conv, state }))];
}

function badge(className: string, text: string): HTMLSpanElement {
  return Object.assign(document.createElement('span'), { className, textContent: text });
}

function preview(state: Conversation | null): string {
  const last = state?.last;
  if (!last) return state === null ? 'no messages yet' : 'no visible messages';
  return last.kind === 'msg' ? `${last.from}: ${textOf(last)}` : `(${last.kind} event)`;
}

export interface ListView {
  current: Conv | null;
  label(conv: Conv, state: Conversation | null): string;
  select(conv: Conv): void;
}

/**
 * What a conversation is called: a group by the name the server gives it (`title`, which follows
 * group.rename), else by a name this page knows (it created the group), else by its id; a 1:1
 * chat by the peer's id.
 */
export function convTitle(conv: Conv, state: Conversation | null | undefined, knownName?: string): string {
  if (conv.type !== 'group') return conv.id;
  return `# ${state?.title ?? knownName ?? conv.id}`;
}

/** One button per conversation: its name, unread count, @-mention count and last message. */
export function renderList(ul: HTMLUListElement, items: readonly ListItem[], view: ListView): void {
  ul.replaceChildren(
    ...items.map(({ conv, state }) => {
      const button = document.createElement('button');
      button.type = 'button';
      button.dataset['conv'] = convKey(conv);
      button.dataset['unread'] = String(state?.unread ?? 0);
      button.dataset['mentions'] = String(state?.mentions ?? 0);
      button.setAttribute('aria-current', String(view.current !== null && convKey(view.current) === convKey(conv)));
      button.append(view.label(conv, state));
      if (state !== null && state.unread > 0) button.append(badge('unread', String(state.unread)));
      if (state !== null && state.mentions > 0) button.append(badge('mentions', `@${state.mentions}`));
      button.append(badge('preview', preview(state)));
      button.addEventListener('click', () => view.select(conv));
      const li = document.createElement('li');
      li.append(button);
      return li;
    }),
  );
}

/** `@user` words of a group message (`@all` for everyone); the server refuses non-members. */
export function mentionsIn(text: string): string[] {
  const names = [...text.matchAll(/(?:^|\s)@([A-Za-z0-9_.-]{1,64})/g)].map((m) => m[1] ?? '');
  return names.includes('all') ? ['@all'] : [...new Set(names)];
}

/** Deleted for me, or a message / group notice of a cleared conversation (on any device). */
export function isHidden(e: Entry, h: HiddenEntries): boolean {
  if (h.by === 'delete') return h.seqs.includes(e.seq);
  return convKey(e.conv) === convKey(h.conv) && (e.kind === 'msg' || e.kind === 'group') && e.seq <= (h.upToSeq ?? h.seq);
}
