import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { ruleValuesEqual } from '../src/definition/rule-equality.js';
import { runtimeOf, stage } from './support.js';

/**
 * Reference semantics, written differently from the implementation: a canonical string per
 * value (sorted keys, undefined-valued keys dropped, -0 as 0), or `undefined` when the value
 * holds a NaN anywhere (NaN equals nothing, so such a value is equal to nothing).
 */
function canonical(value: unknown): string | undefined {
  if (typeof value === 'number') return Number.isNaN(value) ? undefined : `n:${value === 0 ? 0 : value}`;
  if (typeof value === 'string') return `s:${JSON.stringify(value)}`;
  if (typeof value === 'boolean') return `b:${value}`;
  if (typeof value === 'bigint') return `i:${value}`;
  if (value === undefined) return 'u';
  if (value === null) return 'null';
  if (Array.isArray(value)) {
    const items: string[] = [];
    for (let i = 0; i < value.length; i++) {
      const c = canonical(value[i]);
      if (c === undefined) return undefined;
      items.push(c);
    }
    return `[${items.join(',')}]`;
  }
  const record = value as Record<string, unknown>;
  const keys = Object.keys(record)
    .filter((k) => record[k] !== undefined)
    .sort();
  const parts: string[] = [];
  for (const k of keys) {
    const c = canonical(record[k]);
    if (c === undefined) return undefined;
    parts.push(`${JSON.stringify(k)}:${c}`);
  }
  return `{${parts.join(',')}}`;
}

function referenceEqual(a: unknown, b: unknown): boolean {
  const ca = canonical(a);
  return ca !== undefined && ca === canonical(b);
}

const leaf = fc.oneof(
  fc.constantFrom<unknown>(0, -0, 1, -1, Number.NaN, Infinity, '', 'a', '0', 'b', true, false, null, undefined, 0n, 1n),
  fc.integer({ min: -3, max: 3 }),
  fc.string({ maxLength: 2 }),
);
const { value: valueArb } = fc.letrec<{ value: unknown }>((tie) => ({
  value: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    leaf,
    fc.array(tie('value'), { maxLength: 3 }),
    fc.dictionary(fc.constantFrom('a', 'b', 'c', 'toString'), tie('value'), { maxKeys: 3 }),
  ),
}));

/** A copy of `value` with object keys in reverse order and every 0 / -0 flipped. */
function reshuffled(value: unknown): unknown {
  if (typeof value === 'number' && value === 0) return Object.is(value, 0) ? -0 : 0;
  if (Array.isArray(value)) return value.map(reshuffled);
  if (typeof value === 'object' && value !== null) {
    const out: Record<string, unknown> = {};
    for (const key of Object.keys(value).reverse()) out[key] = reshuffled((value as Record<string, unknown>)[key]);
    return out;
  }
  return value;
}

describe('ruleValuesEqual', () => {
  it('compares primitives by ===: 0 equals -0, NaN equals nothing', () => {
    expect(ruleValuesEqual(0, -0)).toBe(true);
    expect(ruleValuesEqual(-0, 0)).toBe(true);
    expect(ruleValuesEqual(Number.NaN, Number.NaN)).toBe(false);
    expect(ruleValuesEqual('a', 'a')).toBe(true);
    expect(ruleValuesEqual(null, null)).toBe(true);
    expect(ruleValuesEqual(undefined, null)).toBe(false);
    expect(ruleValuesEqual(1n, 1n)).toBe(true);
  });

  it('regression: comparing values of different types never throws and never matches (the source crashed or mis-compared)', () => {
    const values: unknown[] = [
      1,
      '1',
      true,
      1n,
      null,
      undefined,
      Symbol('s'),
      () => 1,
      [1],
      { 0: 1 },
      new Date(0),
      new Map([[1, 1]]),
      Number.NaN,
      '',
      0,
      false,
    ];
    for (let i = 0; i < values.length; i++) {
      for (let j = 0; j < values.length; j++) {
        if (i === j) continue;
        expect(() => ruleValuesEqual(values[i], values[j])).not.toThrow();
        expect(ruleValuesEqual(values[i], values[j]), `${String(i)} vs ${String(j)}`).toBe(false);
      }
    }
  });

  it('compares arrays element by element, in order', () => {
    expect(ruleValuesEqual([1, [2, 3]], [1, [2, 3]])).toBe(true);
    expect(ruleValuesEqual([1, 2], [2, 1])).toBe(false);
    expect(ruleValuesEqual([1], [1, 1])).toBe(false);
    expect(ruleValuesEqual([], {})).toBe(false);
    expect(ruleValuesEqual([Number.NaN], [Number.NaN])).toBe(false);
  });

  it('compares plain objects deeply, ignoring key order and undefined-valued keys', () => {
    expect(ruleValuesEqual({ a: 1, b: { c: [1] } }, { b: { c: [1] }, a: 1 })).toBe(true);
    expect(ruleValuesEqual({ a: 1, x: undefined }, { a: 1 })).toBe(true);
    expect(ruleValuesEqual({ a: 1 }, { a: 1, b: 2 })).toBe(false);
    expect(ruleValuesEqual({ a: undefined }, { b: undefined })).toBe(true);
    expect(ruleValuesEqual({ a: 1 }, { a: undefined })).toBe(false);
    expect(ruleValuesEqual(Object.assign(Object.create(null) as object, { a: 1 }), { a: 1 })).toBe(true);
  });

  it('compares other objects only by identity', () => {
    const date = new Date(0);
    expect(ruleValuesEqual(date, date)).toBe(true);
    expect(ruleValuesEqual(new Date(0), new Date(0))).toBe(false);
    expect(ruleValuesEqual({ when: date }, { when: date })).toBe(true);
    expect(ruleValuesEqual(new Map(), new Map())).toBe(false);
  });

  it('does not overflow on cyclic values', () => {
    const a: Record<string, unknown> = { n: 1 };
    a.self = a;
    const b: Record<string, unknown> = { n: 1 };
    b.self = b;
    const c: Record<string, unknown> = { n: 2 };
    c.self = c;
    expect(ruleValuesEqual(a, b)).toBe(true);
    expect(ruleValuesEqual(a, c)).toBe(false);
    const list: unknown[] = [1];
    list.push(list);
    expect(ruleValuesEqual(list, list)).toBe(true);
  });

  it('agrees with the reference semantics on arbitrary pairs', () => {
    fc.assert(
      fc.property(valueArb, valueArb, (a, b) => {
        expect(ruleValuesEqual(a, b)).toBe(referenceEqual(a, b));
        expect(ruleValuesEqual(b, a)).toBe(ruleValuesEqual(a, b));
      }),
      { numRuns: 500 },
    );
  });

  it('agrees with the reference semantics on a value and its reshuffled copy', () => {
    fc.assert(
      fc.property(valueArb, (a) => {
        const b = reshuffled(a);
        expect(ruleValuesEqual(a, b)).toBe(referenceEqual(a, b));
        expect(ruleValuesEqual(a, b)).toBe(canonical(a) !== undefined);
      }),
      { numRuns: 500 },
    );
  });

  it('is the equality routing rules use', async () => {
    await fc.assert(
      fc.asyncProperty(valueArb, valueArb, async (output, value) => {
        fc.pre(value !== undefined);
        const runtime = runtimeOf({
          stages: [
            { name: 'a', run: () => ({ v: output }), routingRules: [{ condition: 'v', value, target: 'b' }] },
            stage('b'),
          ],
        });
        const env = await runtime.run(null);
        const matched = env.trace[0]!.next === 'b';
        expect(matched).toBe(output !== undefined && referenceEqual(output, value));
      }),
      { numRuns: 200 },
    );
  });
});
