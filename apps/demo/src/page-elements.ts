/** The demo page's elements (index.html), looked up once when the page script loads. */

const byId = <T extends HTMLElement>(id: string): T => {
  const el = document.getElementById(id);
  if (!el) throw new Error(`demo page: #${id} missing`);
  return el as T;
};

export const ui = {
  status: byId<HTMLSpanElement>('status'),
  me: byId<HTMLSpanElement>('me'),
  signOut: byId<HTMLButtonElement>('sign-out'),
  signin: byId<HTMLElement>('signin'),
  signinForm: byId<HTMLFormElement>('signin-form'),
  user: byId<HTMLInputElement>('user'),
  app: byId<HTMLElement>('app'),
  newChat: byId<HTMLFormElement>('new-chat'),
  peer: byId<HTMLInputElement>('peer'),
  newGroup: byId<HTMLFormElement>('new-group'),
  groupName: byId<HTMLInputElement>('group-name'),
  groupMembers: byId<HTMLInputElement>('group-members'),
  convs: byId<HTMLUListElement>('convs'),
  chatTitle: byId<HTMLHeadingElement>('chat-title'),
  messages: byId<HTMLOListElement>('messages'),
  sendForm: byId<HTMLFormElement>('send-form'),
  text: byId<HTMLInputElement>('text'),
  lastSend: byId<HTMLParagraphElement>('last-send'),
  error: byId<HTMLParagraphElement>('error'),
  maxSeq: byId<HTMLSpanElement>('max-seq'),
  footer: byId<HTMLElement>('session-footer'),
};
