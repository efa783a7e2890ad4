/** Attributes and listeners `h` knows; every value goes in as text, never as HTML. */
export type Props = {
  readonly class?: string;
  readonly text?: string;
  readonly onclick?: (event: MouseEvent) => void;
  readonly [attribute: string]: string | number | boolean | undefined | null | ((event: MouseEvent) => void);
};

/** A child of `h`: a node, a text, or nothing. */
export type Child = Node | string | null | undefined | false;

/**
 * Makes an element. Every value from the log goes in through `textContent` or an
 * attribute, never as markup, so a fact cannot inject HTML into the page.
 */
export function h(tag: string, props: Props = {}, children: readonly Child[] = []): HTMLElement {
  const node = document.createElement(tag);
  for (const [name, value] of Object.entries(props)) {
    if (value === undefined || value === null || value === false) continue;
    if (name === 'text') node.textContent = String(value);
    else if (name === 'class') node.className = String(value);
    else if (typeof value === 'function') node.addEventListener(name.slice(2), value as EventListener);
    else node.setAttribute(name, value === true ? '' : String(value));
  }
  for (const child of children) {
    if (child === null || child === undefined || child === false) continue;
    node.appendChild(typeof child === 'string' ? document.createTextNode(child) : child);
  }
  return node;
}

/** The element with this id; the page is static, so a missing one is a bug. */
export function byId<T extends HTMLElement = HTMLElement>(id: string): T {
  const node = document.getElementById(id);
  if (node === null) throw new Error(`the page has no #${id}`);
  return node as T;
}

/** `hh:mm:ss.mmm` in the viewer's time zone. */
export function clock(timestamp: string): string {
  const date = new Date(timestamp);
  const pad = (n: number, width: number) => String(n).padStart(width, '0');
  return `${pad(date.getHours(), 2)}:${pad(date.getMinutes(), 2)}:${pad(date.getSeconds(), 2)}.${pad(date.getMilliseconds(), 3)}`;
}

/** Pretty JSON cut at `limit` characters. */
export function shortJson(value: unknown, limit: number): string {
  const text = JSON.stringify(value, null, 2);
  if (text === undefined) return '';
  return text.length > limit ? `${text.slice(0, limit)} \u2026` : text;
}

/** `1 fact`, `2 facts`. */
export function plural(count: number, noun: string): string {
  return `${count} ${noun}${count === 1 ? '' : 's'}`;
}

/** The left column of a row: its sequence (or range) and its time. */
export function gutter(sequence: number, timestamp: string, last?: number): HTMLElement {
  const label = `#${sequence}${last !== undefined && last !== sequence ? `\u2013${last}` : ''}`;
  return h('div', { class: 'gutter' }, [h('span', { class: 'seq', text: label }), h('br'), clock(timestamp)]);
}

type Field = HTMLInputElement | HTMLSelectElement | HTMLTextAreaElement;

/** What a person typed or chose in a field, with the focus and the caret. */
type Draft = {
  readonly value: string;
  readonly focused: boolean;
  readonly start: number | null;
  readonly end: number | null;
};

/** Drafts by their fields' `data-draft` keys. */
export type Drafts = ReadonlyMap<string, Draft>;

/**
 * What a person typed or chose in `root`'s fields that have a `data-draft` key. Taken
 * before a section is drawn again because a fact arrived, and put back with
 * `restoreDrafts`, so that a note half typed is neither lost nor sent empty from the
 * fresh card.
 */
export function takeDrafts(root: Element): Drafts {
  const drafts = new Map<string, Draft>();
  for (const field of root.querySelectorAll<Field>('[data-draft]')) {
    const text = field instanceof HTMLSelectElement ? null : field;
    drafts.set(field.dataset.draft!, {
      value: field.value,
      focused: field.ownerDocument.activeElement === field,
      start: text?.selectionStart ?? null,
      end: text?.selectionEnd ?? null,
    });
  }
  return drafts;
}

/** Puts `drafts` back into `root`'s fields of the same keys (in the page), focus and caret too. */
export function restoreDrafts(root: Element, drafts: Drafts): void {
  if (drafts.size === 0) return;
  for (const field of root.querySelectorAll<Field>('[data-draft]')) {
    const draft = drafts.get(field.dataset.draft!);
    if (draft === undefined) continue;
    field.value = draft.value;
    if (!draft.focused) continue;
    field.focus();
    if (!(field instanceof HTMLSelectElement) && draft.start !== null && draft.end !== null)
      field.setSelectionRange(draft.start, draft.end);
  }
}
