/**
 * Replaces strings before anything is written: called with every string of a cassette (and its
 * path from the cassette's root, e.g. `['turns', 0, 'signal', 'payload', 'text']`); returns what
 * to write instead (secrets, personal data). Make it idempotent (redacting a redacted text
 * changes nothing): replays run on the redacted text.
 */
export type Redactor = (value: string, path: readonly (string | number)[]) => string;

/** `value` (JSON) with every string passed through `redact`; object keys are kept. @internal */
export function redactDeep<T>(value: T, redact: Redactor | undefined, path: (string | number)[] = []): T {
  if (redact === undefined) return value;
  return walk(value, redact, path) as T;
}

function walk(value: unknown, redact: Redactor, path: (string | number)[]): unknown {
  if (typeof value === 'string') return redact(value, [...path]);
  if (typeof value !== 'object' || value === null) return value;
  if (Array.isArray(value))
    return value.map((v: unknown, i) => {
      path.push(i);
      const out = walk(v, redact, path);
      path.pop();
      return out;
    });
  const out: Record<string, unknown> = {};
  for (const key of Object.keys(value)) {
    path.push(key);
    const v = walk((value as Record<string, unknown>)[key], redact, path);
    path.pop();
    Object.defineProperty(out, key, { value: v, enumerable: true, writable: true, configurable: true });
  }
  return out;
}
