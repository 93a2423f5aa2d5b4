// Building the page's DOM. Every piece of session data goes in through text nodes (never
// innerHTML), so a message holding `<script>` shows as text; and strings go through
// `visible()`, so control characters show escaped.
import { visible, visibleLines } from './visible-text.js';

/**
 * An element with attributes (`on*` keys become listeners) and children: strings become text
 * with control characters escaped (one line), nodes are appended as they are.
 */
export function el(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs)) {
    if (value === undefined || value === false) continue;
    if (key.startsWith('on')) node.addEventListener(key.slice(2), value);
    else if (key === 'className') node.className = value;
    else node.setAttribute(key, value === true ? '' : String(value));
  }
  for (const child of children.flat()) {
    if (child === undefined || child === null || child === false) continue;
    node.append(typeof child === 'string' || typeof child === 'number' ? visible(String(child)) : child);
  }
  return node;
}

/** A block of text (a message, JSON) as a text node: control characters escaped, line breaks kept. */
export function lines(text) {
  return document.createTextNode(visibleLines(text));
}

/** Shows `message` in the page's error line (hidden when empty). */
function showError(message) {
  const box = document.getElementById('error');
  box.textContent = visible(message);
  box.hidden = message === '';
}

/** `showError` for a failed promise. */
export function reportError(error) {
  showError(String(error?.message ?? error));
}

/** A value as indented JSON (for a tool's arguments or result). */
export function json(value) {
  return JSON.stringify(value, null, 2) ?? String(value);
}

/** The local time of day of an ISO-8601 time (the text as it is when it is not one). */
export function time(iso) {
  const d = new Date(iso);
  return Number.isNaN(d.getTime()) ? String(iso) : d.toLocaleTimeString();
}

/** The bold label an entry starts with. */
export function what(text) {
  return el('span', { className: 'what' }, text);
}
