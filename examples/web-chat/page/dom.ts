// The two pages' DOM helpers: finding the page's elements, and making new ones whose text is
// always text (`textContent`), never HTML.

/** The page's element at `selector`, of `type`. @throws Error when the page has none. */
export function $<T extends HTMLElement>(selector: string, type: new () => T): T {
  const node = document.querySelector(selector);
  if (!(node instanceof type)) throw new Error(`The page has no ${selector}`);
  return node;
}

/** A new element with attributes and, optionally, text. */
export function el(tag: string, attrs: Record<string, string> = {}, text?: string): HTMLElement {
  const node = document.createElement(tag);
  for (const [name, value] of Object.entries(attrs)) node.setAttribute(name, value);
  if (text !== undefined) node.textContent = text;
  return node;
}
