import type { JsonValue } from '@signalyard/core';

/**
 * The runner's `redact` option: called with every string of a payload a cause keeps (and its
 * path from the payload's root) before it is saved; returns what to keep instead.
 */
export type Redact = (value: string, path: readonly (string | number)[]) => string;

/** The default `maxCausePayloadBytes`: 16 KiB. @internal */
export const DEFAULT_MAX_CAUSE_PAYLOAD_BYTES = 16 * 1024;

/** Deeper than this, a payload is not kept (it is most likely a cycle). */
const MAX_DEPTH = 64;

/** What a cause keeps of a payload: the JSON, or why not. @internal */
export interface KeptPayload {
  readonly payload?: JsonValue;
  readonly omitted?: 'too_large' | 'not_json';
}

const NOTHING: KeptPayload = Object.freeze({});
const TOO_LARGE: KeptPayload = Object.freeze({ omitted: 'too_large' });
const NOT_JSON: KeptPayload = Object.freeze({ omitted: 'not_json' });

/** Thrown inside the copy to leave the payload out (caught in {@link causePayload}). */
class Omitted extends Error {
  constructor(readonly kept: KeptPayload) {
    super(kept.omitted);
  }
}

/**
 * A payload as the JSON a cause keeps (what `JSON.parse(JSON.stringify(payload))` would give,
 * strings passed through `redact`), when its JSON is at most `max` UTF-8 bytes; `omitted` says
 * why not (`too_large`, or `not_json` for a `BigInt`, a non-finite number or a cycle). An
 * `undefined` payload keeps nothing. A string payload without `redact` is kept as it is (no
 * copy): the cheap path of most user messages. @internal
 */
export function causePayload(payload: unknown, max: number, redact: Redact | undefined): KeptPayload {
  if (payload === undefined || typeof payload === 'function' || typeof payload === 'symbol') return NOTHING;
  if (typeof payload === 'string' && redact === undefined) {
    // Each code unit is at most 3 UTF-8 bytes (a surrogate pair is 4 for 2 units); quotes add 2.
    if (payload.length * 3 + 2 <= max || Buffer.byteLength(payload) + 2 <= max) return { payload };
    return TOO_LARGE;
  }
  const budget = { left: max };
  try {
    const value = copy(payload, [], budget, redact, 0);
    return value === undefined ? NOTHING : { payload: value };
  } catch (error) {
    if (error instanceof Omitted) return error.kept;
    throw error;
  }
}

function spend(budget: { left: number }, bytes: number): void {
  budget.left -= bytes;
  if (budget.left < 0) throw new Omitted(TOO_LARGE);
}

function copy(
  value: unknown,
  path: (string | number)[],
  budget: { left: number },
  redact: Redact | undefined,
  depth: number,
): JsonValue | undefined {
  if (depth > MAX_DEPTH) throw new Omitted(NOT_JSON);
  switch (typeof value) {
    case 'string': {
      const s = redact === undefined ? value : redact(value, [...path]);
      spend(budget, (s.length * 3 <= budget.left ? s.length : Buffer.byteLength(s)) + 2);
      return s;
    }
    case 'number':
      if (!Number.isFinite(value)) throw new Omitted(NOT_JSON);
      spend(budget, String(value).length);
      return value;
    case 'boolean':
      spend(budget, value ? 4 : 5);
      return value;
    case 'bigint':
      throw new Omitted(NOT_JSON);
    case 'object':
      break;
    default:
      return undefined; // undefined, functions and symbols: JSON leaves them out
  }
  if (value === null) {
    spend(budget, 4);
    return null;
  }
  const withJson = value as { toJSON?: unknown };
  if (typeof withJson.toJSON === 'function')
    return copy((withJson.toJSON as () => unknown).call(value), path, budget, redact, depth + 1);
  if (Array.isArray(value)) {
    const out: JsonValue[] = [];
    spend(budget, 2);
    for (let i = 0; i < value.length; i++) {
      path.push(i);
      out.push(copy(value[i], path, budget, redact, depth + 1) ?? null);
      path.pop();
      spend(budget, 1);
    }
    return out;
  }
  const out: Record<string, JsonValue> = {};
  spend(budget, 2);
  for (const key of Object.keys(value)) {
    path.push(key);
    const v = copy((value as Record<string, unknown>)[key], path, budget, redact, depth + 1);
    path.pop();
    if (v === undefined) continue;
    spend(budget, key.length + 4);
    // A data property even for "__proto__": the copy never changes its own prototype.
    Object.defineProperty(out, key, { value: v, enumerable: true, writable: true, configurable: true });
  }
  return out;
}
