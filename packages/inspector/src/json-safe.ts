import { isSignalyardError } from '@signalyard/core';

/** The longest string kept in a value sent to the page; longer ones are cut with an ellipsis. */
const MAX_STRING = 4000;
/** How deep a value sent to the page is followed. */
const MAX_DEPTH = 8;
/** How many entries of an array or object are kept. */
const MAX_ENTRIES = 100;

/**
 * `value` as plain JSON data the page can show: functions and symbols dropped, cycles and
 * values too deep or too long cut (`"[cycle]"`, `"[…]"`), `bigint` as a string, errors as
 * `{ name, code?, message }`. Never throws (a throwing getter reads as `"[unreadable]"`).
 */
export function jsonSafe(value: unknown, depth = 0, seen = new Set<object>()): unknown {
  if (value === null || typeof value === 'boolean') return value;
  if (typeof value === 'number') return Number.isFinite(value) ? value : String(value);
  if (typeof value === 'string') return value.length > MAX_STRING ? `${value.slice(0, MAX_STRING)}…` : value;
  if (typeof value === 'bigint') return value.toString();
  if (typeof value !== 'object') return undefined; // undefined, functions, symbols
  if (seen.has(value)) return '[cycle]';
  if (depth >= MAX_DEPTH) return '[…]';
  if (value instanceof Error || isSignalyardError(value)) return errorData(value);
  seen.add(value);
  try {
    if (Array.isArray(value)) {
      return value.slice(0, MAX_ENTRIES).map((v: unknown) => jsonSafe(v, depth + 1, seen) ?? null);
    }
    const out: Record<string, unknown> = {};
    for (const key of Object.keys(value).slice(0, MAX_ENTRIES)) {
      const v = jsonSafe((value as Record<string, unknown>)[key], depth + 1, seen);
      if (v !== undefined) out[key] = v;
    }
    return out;
  } catch {
    return '[unreadable]';
  } finally {
    seen.delete(value);
  }
}

/** An error as `{ name, code?, message }`. */
export function errorData(error: unknown): { name: string; code?: string; message: string } {
  try {
    const e = error as { name?: unknown; code?: unknown; message?: unknown };
    return {
      name: typeof e.name === 'string' ? e.name : 'Error',
      ...(typeof e.code === 'string' && { code: e.code }),
      message: typeof e.message === 'string' ? e.message : String(error),
    };
  } catch {
    return { name: 'Error', message: '[unreadable]' };
  }
}
