import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import {
  Envelope,
  INTERRUPT_KINDS,
  TERMINAL_REASONS,
  type EnvelopeJSON,
  type PipelineUsageError,
} from '@signalyard/pipeline';
import { expectCode, runtimeOf, stage, thrown } from './support.js';

const iso = fc.integer({ min: 0, max: 4_000_000_000_000 }).map((ms) => new Date(ms).toISOString());
const name = fc.stringMatching(/^[a-z][a-z_]{0,6}$/);
const json = fc.jsonValue();
const interruptArb = fc.record(
  {
    id: fc.uuid(),
    kind: fc.constantFrom(...INTERRUPT_KINDS),
    stage: name,
    payload: json,
    createdAt: iso,
    expiresAt: iso,
  },
  { requiredKeys: ['id', 'kind', 'stage', 'createdAt'] },
);
const responseArb = fc.record(
  { text: fc.string(), approved: fc.boolean(), decision: fc.string(), data: json },
  { requiredKeys: [] },
);
const errorArb = fc.record(
  { stage: name, error: fc.string(), code: fc.stringMatching(/^[A-Z_]{1,10}$/), at: iso },
  { requiredKeys: ['stage', 'error', 'at'] },
);
const traceArb = fc.record({ stage: name, startedAt: iso, endedAt: iso, next: name });

/** Arbitrary envelope JSON that is consistent (a terminated envelope has a reason and no interrupt). */
const envelopeJsonArb: fc.Arbitrary<EnvelopeJSON> = fc
  .record({
    id: fc.uuid(),
    input: json,
    outputs: fc.dictionary(name, fc.dictionary(name, json, { maxKeys: 3 }), { maxKeys: 3 }),
    currentStage: name,
    iteration: fc.nat(50),
    llmCalls: fc.nat(50),
    agentHops: fc.nat(50),
    edgeTraversals: fc.dictionary(
      fc.tuple(name, name).map(([a, b]) => `${a}->${b}`),
      fc.nat(9),
      { maxKeys: 3 },
    ),
    state: fc.oneof(
      fc.record({
        terminated: fc.constant(true),
        terminalReason: fc.constantFrom(...TERMINAL_REASONS),
        terminationReason: fc.option(fc.string(), { nil: undefined }),
      }),
      fc.record({ terminated: fc.constant(false), interrupt: fc.option(interruptArb, { nil: undefined }) }),
    ),
    resolvedInterrupts: fc.array(
      fc.tuple(interruptArb, responseArb, iso).map(([i, response, resolvedAt]) => ({ ...i, response, resolvedAt })),
      { maxLength: 2 },
    ),
    errors: fc.array(errorArb, { maxLength: 3 }),
    trace: fc.array(traceArb, { maxLength: 3 }),
    mode: fc.constantFrom('sequential' as const, 'parallel' as const),
    completedStages: fc.array(name, { maxLength: 3 }),
    skippedStages: fc.array(name, { maxLength: 3 }),
  })
  .map(({ state, ...rest }) => {
    const out: Record<string, unknown> = { ...rest, ...state };
    // plain prototypes and no undefined values: exactly what JSON.parse would give
    return JSON.parse(JSON.stringify(out)) as EnvelopeJSON;
  });

function invalidAt(value: unknown): string {
  const error = thrown(() => Envelope.fromJSON(value));
  expectCode(error, 'PIPELINE_ENVELOPE_INVALID');
  return (error as PipelineUsageError).argument;
}

describe('Envelope JSON round trip', () => {
  it('Envelope.fromJSON(env.toJSON()) equals env for a real run', async () => {
    const runtime = runtimeOf({
      stages: [
        stage('a', { v: [1, { x: null }] }, { defaultNext: 'b' }),
        stage('b', { ask: 1 }, { defaultNext: 'clarification' }),
      ],
    });
    const paused = await runtime.run({ q: 'hi' });
    const done = await runtime.resume(paused, { text: 'answer', data: { n: 1 } });
    for (const env of [paused, done]) {
      const copy = Envelope.fromJSON(env.toJSON());
      expect(copy).toEqual(env);
      expect(copy).toBeInstanceOf(Envelope);
      expect(Envelope.fromJSON(JSON.parse(JSON.stringify(env)))).toEqual(env);
    }
  });

  it('toJSON(fromJSON(json)) reproduces any valid envelope JSON, also through JSON.stringify', () => {
    fc.assert(
      fc.property(envelopeJsonArb, (value) => {
        const env = Envelope.fromJSON(value);
        expect(env.toJSON()).toStrictEqual(value);
        expect(Envelope.fromJSON(env.toJSON())).toEqual(env);
        expect(Envelope.fromJSON(JSON.parse(JSON.stringify(env)))).toEqual(env);
      }),
      { numRuns: 200 },
    );
  });

  it('toJSON lists the contract fields with optional ones only when set', async () => {
    const env = await runtimeOf({ stages: [stage('a')] }).run(1);
    expect(Object.keys(env.toJSON())).toEqual([
      'id',
      'input',
      'outputs',
      'currentStage',
      'iteration',
      'llmCalls',
      'agentHops',
      'edgeTraversals',
      'terminated',
      'terminalReason',
      'resolvedInterrupts',
      'errors',
      'trace',
      'mode',
      'completedStages',
      'skippedStages',
    ]);
    expect(Object.keys(env)).toEqual([
      'id',
      'input',
      'outputs',
      'currentStage',
      'iteration',
      'llmCalls',
      'agentHops',
      'edgeTraversals',
      'terminated',
      'terminalReason',
      'resolvedInterrupts',
      'errors',
      'trace',
      'mode',
      'completedStages',
      'skippedStages',
    ]);
  });

  it('is immutable, and neither toJSON output nor fromJSON input share containers with it', () => {
    fc.assert(
      fc.property(envelopeJsonArb, (value) => {
        const env = Envelope.fromJSON(value);
        const snapshot = env.toJSON();
        expect(Object.isFrozen(env)).toBe(true);
        expect(Object.isFrozen(env.outputs)).toBe(true);
        expect(Object.isFrozen(env.trace)).toBe(true);
        expect(Object.isFrozen(env.edgeTraversals)).toBe(true);
        value.trace.push({
          stage: 'x',
          startedAt: snapshot.trace[0]?.startedAt ?? new Date(0).toISOString(),
          endedAt: new Date(0).toISOString(),
          next: 'y',
        });
        value.outputs.extra = {};
        const out = env.toJSON();
        out.errors.push({ stage: 'x', error: 'x', at: new Date(0).toISOString() });
        expect(env.toJSON()).toStrictEqual(snapshot);
      }),
      { numRuns: 50 },
    );
  });

  it('keeps a "__proto__" output key as data', () => {
    const base = Envelope.fromJSON({
      id: 'e',
      input: null,
      outputs: {},
      currentStage: 'a',
      iteration: 0,
      llmCalls: 0,
      agentHops: 0,
      edgeTraversals: {},
      terminated: false,
      resolvedInterrupts: [],
      errors: [],
      trace: [],
      mode: 'sequential',
      completedStages: [],
      skippedStages: [],
    }).toJSON();
    const env = Envelope.fromJSON(
      JSON.parse(JSON.stringify(base).replace('"outputs":{}', '"outputs":{"__proto__":{"x":1}}')),
    );
    expect(Object.keys(env.outputs)).toEqual(['__proto__']);
    expect(Object.getPrototypeOf(env.outputs)).toBe(Object.prototype);
    expect(Object.keys(env.toJSON().outputs)).toEqual(['__proto__']);
  });

  it('Envelope.isInstance tells envelopes from their JSON', async () => {
    const env = await runtimeOf({ stages: [stage('a')] }).run(null);
    expect(Envelope.isInstance(env)).toBe(true);
    expect(Envelope.isInstance(env.toJSON())).toBe(false);
    expect(Envelope.isInstance(null)).toBe(false);
    expect(Object.getOwnPropertySymbols(env)).toEqual([]);
  });
});

describe('Envelope.fromJSON validation', () => {
  const valid = (): Record<string, unknown> => ({
    id: 'e1',
    input: null,
    outputs: {},
    currentStage: 'a',
    iteration: 0,
    llmCalls: 0,
    agentHops: 0,
    edgeTraversals: {},
    terminated: false,
    resolvedInterrupts: [],
    errors: [],
    trace: [],
    mode: 'sequential',
    completedStages: [],
    skippedStages: [],
  });
  const interrupt = { id: 'i1', kind: 'clarification', stage: 'a', createdAt: '2026-01-01T00:00:00.000Z' };

  it('accepts the minimal valid envelope', () => {
    expect(Envelope.fromJSON(valid()).id).toBe('e1');
  });

  it.each([
    ['not an object', () => 'envelope', ''],
    ['an array', () => [], ''],
    ['an unknown key', () => ({ ...valid(), extra: 1 }), 'extra'],
    ['an empty id', () => ({ ...valid(), id: '' }), 'id'],
    ['outputs not an object', () => ({ ...valid(), outputs: [] }), 'outputs'],
    ['a negative counter', () => ({ ...valid(), iteration: -1 }), 'iteration'],
    ['a fractional counter', () => ({ ...valid(), llmCalls: 1.5 }), 'llmCalls'],
    ['a missing counter', () => ({ ...valid(), agentHops: undefined }), 'agentHops'],
    ['a bad edge count', () => ({ ...valid(), edgeTraversals: { 'a->b': 'x' } }), 'edgeTraversals["a->b"]'],
    ['terminated not a boolean', () => ({ ...valid(), terminated: 'no' }), 'terminated'],
    ['terminated without a reason', () => ({ ...valid(), terminated: true }), 'terminalReason'],
    ['an unknown terminal reason', () => ({ ...valid(), terminated: true, terminalReason: 'done' }), 'terminalReason'],
    ['a reason while not terminated', () => ({ ...valid(), terminalReason: 'completed' }), 'terminalReason'],
    [
      'an interrupt on a terminated envelope',
      () => ({ ...valid(), terminated: true, terminalReason: 'completed', interrupt }),
      'interrupt',
    ],
    [
      'an interrupt of unknown kind',
      () => ({ ...valid(), interrupt: { ...interrupt, kind: 'question' } }),
      'interrupt.kind',
    ],
    [
      'an interrupt with a bad createdAt',
      () => ({ ...valid(), interrupt: { ...interrupt, createdAt: 'yesterday' } }),
      'interrupt.createdAt',
    ],
    [
      'an interrupt with an unknown key',
      () => ({ ...valid(), interrupt: { ...interrupt, extra: 1 } }),
      'interrupt.extra',
    ],
    [
      'a resolved interrupt without response',
      () => ({ ...valid(), resolvedInterrupts: [{ ...interrupt, resolvedAt: interrupt.createdAt }] }),
      'resolvedInterrupts[0].response',
    ],
    [
      'a resolved interrupt with a bad response',
      () => ({
        ...valid(),
        resolvedInterrupts: [{ ...interrupt, response: { approved: 'y' }, resolvedAt: interrupt.createdAt }],
      }),
      'resolvedInterrupts[0].response.approved',
    ],
    [
      'an error record missing its stage',
      () => ({ ...valid(), errors: [{ error: 'x', at: interrupt.createdAt }] }),
      'errors[0].stage',
    ],
    [
      'an error record with a non-string code',
      () => ({ ...valid(), errors: [{ stage: 'a', error: 'x', code: 1, at: interrupt.createdAt }] }),
      'errors[0].code',
    ],
    ['a trace entry that is not an object', () => ({ ...valid(), trace: [1] }), 'trace[0]'],
    [
      'a trace entry with a bad time',
      () => ({ ...valid(), trace: [{ stage: 'a', startedAt: 'x', endedAt: interrupt.createdAt, next: 'end' }] }),
      'trace[0].startedAt',
    ],
    ['an unknown mode', () => ({ ...valid(), mode: 'dag' }), 'mode'],
    ['completedStages not an array', () => ({ ...valid(), completedStages: 'a' }), 'completedStages'],
    ['an empty skipped stage name', () => ({ ...valid(), skippedStages: [''] }), 'skippedStages[0]'],
    ['a non-string terminationReason', () => ({ ...valid(), terminationReason: 5 }), 'terminationReason'],
  ])('rejects %s with PIPELINE_ENVELOPE_INVALID naming the path', (_what, make, path) => {
    expect(invalidAt(make())).toBe(path);
  });

  it('names the bad value in the message', () => {
    const error = thrown(() => Envelope.fromJSON({ ...valid(), mode: 'dag' }));
    expect((error as Error).message).toContain('"dag"');
    expect((error as Error).message).toContain('mode');
  });
});
