import type { JsonValue } from '../approval.js';

/**
 * `value` as JSON data, following `JSON.stringify`'s rules (own enumerable keys, `toJSON`,
 * `undefined`/functions/symbols dropped from objects and `null` in arrays, non-finite numbers as
 * `null`) and going further where it would throw or lose everything: a `bigint` becomes its
 * decimal string, an `Error` `{ name, message, code? }`, a cycle `"[cycle]"`, a value whose
 * getter or `toJSON` throws `"[unreadable]"`. `undefined` for a value with no JSON form at all
 * (`undefined`, a function, a symbol). Never throws. For values that cross a process boundary
 * as information (outcome outputs, error fields, stream events), not for data that must round-trip
 * exactly (checkpoints refuse such values instead).
 */
export function toJsonValue(value: unknown): JsonValue | undefined {
  return convert(value, new Set());
}

function convert(value: unknown, ancestors: Set<object>): JsonValue | undefined {
  switch (typeof value) {
    case 'string':
    case 'boolean':
      return value;
    case 'number':
      return Number.isFinite(value) ? value : null;
    case 'bigint':
      return value.toString();
    case 'object':
      break;
    default:
      return undefined; // undefined, function, symbol
  }
  if (value === null) return null;
  if (ancestors.has(value)) return '[cycle]';
  try {
    if (value instanceof Error) return errorJson(value);
    const toJSON = (value as { toJSON?: unknown }).toJSON;
    if (typeof toJSON === 'function') {
      const replaced: unknown = (toJSON as (key: string) => unknown).call(value, '');
      if (replaced !== value) return convert(replaced, ancestors);
    }
    ancestors.add(value);
    try {
      if (Array.isArray(value)) return value.map((item: unknown) => convert(item, ancestors) ?? null);
      const out: Record<string, JsonValue> = {};
      for (const key of Object.keys(value)) {
        const item = convert((value as Record<string, unknown>)[key], ancestors);
        if (item !== undefined) out[key] = item;
      }
      return out;
    } finally {
      ancestors.delete(value);
    }
  } catch {
    return '[unreadable]';
  }
}

/** An error as `{ name, message, code? }` (its code when it has a string one). */
function errorJson(error: Error): JsonValue {
  const code = (error as { code?: unknown }).code;
  return {
    name: typeof error.name === 'string' ? error.name : 'Error',
    message: typeof error.message === 'string' ? error.message : '',
    ...(typeof code === 'string' && { code }),
  };
}

/** How many bytes `text` takes as UTF-8 (a lone surrogate counts 3, as U+FFFD), without encoding it. */
export function utf8Length(text: string): number {
  let bytes = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c < 0x80) bytes += 1;
    else if (c < 0x800) bytes += 2;
    else if (c >= 0xd800 && c <= 0xdbff && i + 1 < text.length) {
      const next = text.charCodeAt(i + 1);
      if (next >= 0xdc00 && next <= 0xdfff) {
        bytes += 4;
        i++;
      } else bytes += 3;
    } else bytes += 3;
  }
  return bytes;
}
