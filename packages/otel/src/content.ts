import type { Signal } from '@signalyard/core';

/**
 * The text a `user_message` signal carries (its payload when a string, else `payload.text`), or
 * `undefined` for other signals: what `recordContent` records on a signal span.
 */
export function userTextOf(signal: Signal): string | undefined {
  if (signal.kind !== 'user_message') return undefined;
  const payload = signal.payload;
  if (typeof payload === 'string') return payload;
  if (typeof payload === 'object' && payload !== null) {
    const text = (payload as { text?: unknown }).text;
    if (typeof text === 'string') return text;
  }
  return undefined;
}

/**
 * A value as attribute text: strings as they are, anything else as JSON — or `String(value)`
 * when it has no JSON form (a cycle, a BigInt), so recording content never throws.
 */
export function contentText(value: unknown): string {
  if (typeof value === 'string') return value;
  try {
    const json = JSON.stringify(value) as string | undefined;
    return json ?? String(value);
  } catch {
    return String(value);
  }
}
