/**
 * The page builds every element with these helpers: text goes in as text nodes, never as HTML,
 * so a title holding `<script>` shows as those characters. Markdown is the one place HTML is
 * made, and it passes through DOMPurify first (see markdown.ts).
 */
import { typeColour } from './colours.js';

type Child = Node | string | number | null | undefined | false;
type Attributes = Record<string, string | number | boolean | undefined | ((event: Event) => void)>;

export function h<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  attributes: Attributes = {},
  ...children: (Child | Child[])[]
): HTMLElementTagNameMap[K] {
  const el = document.createElement(tag);
  for (const [name, value] of Object.entries(attributes)) {
    if (value === undefined || value === false) continue;
    if (typeof value === 'function') el.addEventListener(name.replace(/^on/, ''), value);
    else if (name.startsWith('on')) throw new Error(`refusing inline handler ${name}`);
    else el.setAttribute(name, value === true ? '' : String(value));
  }
  append(el, children);
  return el;
}

export function append(el: Element, children: (Child | Child[])[]): void {
  for (const child of children.flat()) {
    if (child === null || child === undefined || child === false) continue;
    el.append(typeof child === 'string' || typeof child === 'number' ? document.createTextNode(String(child)) : child);
  }
}

/** Replaces what `el` holds. */
export function fill(el: Element, ...children: (Child | Child[])[]): void {
  el.replaceChildren();
  append(el, children);
}

/** The address of a page, with its parameters encoded. */
export function href(path: string, params: Record<string, string | number | undefined> = {}): string {
  const query = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) if (v !== undefined && v !== '') query.set(k, String(v));
  const q = query.toString();
  return q ? `${path}?${q}` : path;
}

export const entryHref = (id: string) => `/entry/${encodeURIComponent(id)}`;
export const pathHref = (id: string) => `/paths/${encodeURIComponent(id)}`;

export class ApiError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

/** GETs a JSON API route; the error's message is the server's. */
export async function api<T>(
  path: string,
  params: Record<string, string | number | string[] | undefined> = {},
  signal?: AbortSignal,
): Promise<T> {
  const query = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) {
    if (v === undefined || v === '') continue;
    for (const one of Array.isArray(v) ? v : [v]) query.append(k, String(one));
  }
  const q = query.toString();
  const res = await fetch(`/api${path}${q ? `?${q}` : ''}`, { credentials: 'same-origin', ...(signal ? { signal } : {}) });
  const body = (await res.json()) as T & { error?: { message: string } };
  if (!res.ok) throw new ApiError(res.status, body.error?.message ?? `HTTP ${res.status}`);
  return body;
}

export function showError(root: Element, e: unknown): void {
  root.replaceChildren(h('p', { class: 'error', role: 'alert' }, e instanceof Error ? e.message : String(e)));
}

export const score = (n: number) => n.toFixed(3);

/** A small chip that names an entry type, coloured as the graph colours it. */
export function typeChip(entryType: string): HTMLElement {
  const chip = h('span', { class: 'chip type' }, entryType);
  // Through the DOM, not a style attribute: the page's CSP allows no inline style.
  chip.style.borderColor = typeColour(entryType);
  chip.style.color = typeColour(entryType);
  return chip;
}
