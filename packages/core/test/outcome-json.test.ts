import {
  AbortedError,
  Action,
  CheckpointConflictError,
  ConfigError,
  DEFAULT_MAX_OUTCOME_BYTES,
  InboxError,
  SignalyardError,
  isSignalyardError,
  outcomeFromJson,
  outcomeToJson,
  signalyardErrorFromJson,
  signalyardErrorToJson,
  type Outcome,
  type OutcomeJson,
  type OutcomeStatus,
} from '@signalyard/core';
import { thrown, expectCode } from '@signalyard/test-utils';
import { describe, expect, it } from 'vitest';

const base = { sessionKey: 'agent:desk:main', agentId: 'desk', decidedBy: undefined } as const;

function outcome(status: OutcomeStatus, extra: Partial<Outcome> = {}): Outcome {
  return { ...base, action: Action.Continue, status, ...extra };
}

/** What crosses the process boundary: JSON text. */
const wire = (json: OutcomeJson): OutcomeJson => JSON.parse(JSON.stringify(json)) as OutcomeJson;

describe('outcomeToJson and outcomeFromJson', () => {
  it.each(['completed', 'stopped', 'rejected', 'unrouted', 'paused', 'failed'] as const)(
    'a %s outcome round-trips through JSON text',
    (status) => {
      const original = outcome(status, { output: { reply: 'hi', n: [1, 2] } });
      const json = outcomeToJson(original);
      expect(wire(json)).toEqual(json);
      const back = outcomeFromJson(wire(json));
      expect(back).toEqual({ ...original });
    },
  );

  it('an unrouted outcome has no action and no decidedBy', () => {
    const json = outcomeToJson({ ...base, action: undefined, status: 'unrouted' });
    expect(json).toEqual({ sessionKey: base.sessionKey, agentId: 'desk', status: 'unrouted' });
    const back = outcomeFromJson(json);
    expect(back.action).toBeUndefined();
    expect(back.decidedBy).toBeUndefined();
    expect('action' in back && 'decidedBy' in back).toBe(true);
  });

  it('keeps the route of decidedBy without its predicate', () => {
    const original = outcome('completed', {
      decidedBy: {
        tier: 'agent',
        route: {
          kind: 'user_message',
          action: Action.transition('check'),
          priority: 3,
          name: 'check',
          predicate: () => true,
        },
      },
    });
    const json = outcomeToJson(original);
    expect(json.decidedBy).toEqual({
      tier: 'agent',
      route: { kind: 'user_message', action: { type: 'transition', target: 'check' }, priority: 3, name: 'check' },
    });
    expect(outcomeFromJson(wire(json)).decidedBy?.route.predicate).toBeUndefined();
  });

  it.each([
    [
      'CheckpointConflictError',
      new CheckpointConflictError({ key: 'k', expected: 1, actual: 2 }),
      { key: 'k', expected: 1, actual: 2 },
    ],
    [
      'ConfigError',
      new ConfigError({ problems: [{ path: 'a.b', message: 'bad', line: 3 }], file: 'crew.yaml' }),
      { problems: [{ path: 'a.b', message: 'bad', line: 3 }], file: 'crew.yaml' },
    ],
    [
      'InboxError',
      new InboxError({ code: 'INBOX_POISONED', message: 'poisoned', sessionKey: 's' }),
      { sessionKey: 's' },
    ],
    ['SignalyardError', new SignalyardError({ code: 'ENGINE_FAILED', message: 'broke' }), {}],
  ])('a failed outcome with a %s keeps its code, message and fields', (_name, error, fields) => {
    const json = outcomeToJson(outcome('failed', { error }));
    expect(json.error).toEqual({ code: error.code, message: error.message, fields });
    const back = outcomeFromJson(wire(json)).error;
    expect(isSignalyardError(back, error.code)).toBe(true);
    expect(back?.message).toBe(error.message);
    for (const [key, value] of Object.entries(fields))
      expect((back as unknown as Record<string, unknown>)[key]).toEqual(value);
  });

  it("keeps a cause's name and message", () => {
    const error = new AbortedError({ cause: new TypeError('socket closed') });
    const json = signalyardErrorToJson(error);
    expect(json.cause).toEqual({ name: 'TypeError', message: 'socket closed' });
    const back = signalyardErrorFromJson(wire({ ...outcomeToJson(outcome('failed', { error })) }).error!);
    expect(back.code).toBe('ABORTED');
    expect(back.cause).toBeInstanceOf(Error);
    expect((back.cause as Error).name).toBe('TypeError');
    expect((back.cause as Error).message).toBe('socket closed');
  });

  it('turns an output that JSON cannot carry into JSON: bigint, errors, cycles, dates', () => {
    const cycle: Record<string, unknown> = { name: 'c' };
    cycle.self = cycle;
    const json = outcomeToJson(
      outcome('completed', {
        output: {
          n: 10n,
          e: new RangeError('r'),
          cycle,
          at: new Date(Date.UTC(2026, 0, 1)),
          f: () => 1,
          nan: Number.NaN,
        },
      }),
    );
    expect(json.output).toEqual({
      n: '10',
      e: { name: 'RangeError', message: 'r' },
      cycle: { name: 'c', self: '[cycle]' },
      at: '2026-01-01T00:00:00.000Z',
      nan: null,
    });
  });

  it('replaces an output over maxOutcomeBytes by { truncated: true, bytes } (UTF-8 bytes), and keeps one at the limit', () => {
    const text = 'é'.repeat(10); // 20 bytes in UTF-8, 22 with its quotes
    expect(outcomeToJson(outcome('completed', { output: text }), { maxOutcomeBytes: 21 }).output).toEqual({
      truncated: true,
      bytes: 22,
    });
    expect(outcomeToJson(outcome('completed', { output: text }), { maxOutcomeBytes: 22 }).output).toBe(text);
    const big = 'x'.repeat(DEFAULT_MAX_OUTCOME_BYTES);
    expect(outcomeToJson(outcome('completed', { output: big })).output).toEqual({
      truncated: true,
      bytes: DEFAULT_MAX_OUTCOME_BYTES + 2,
    });
  });

  it('keeps pending approvals and mergedWith', () => {
    const pendingApprovals = [
      {
        id: 'a1',
        toolCallId: 'c1',
        toolName: 'pay',
        arguments: { amount: 5 },
        agentId: 'desk',
        requestedAt: '2026-01-01T00:00:00.000Z',
      },
    ];
    const json = outcomeToJson(outcome('paused', { pendingApprovals, mergedWith: 2 }));
    expect(json.pendingApprovals).toEqual(pendingApprovals);
    expect(json.mergedWith).toBe(2);
    expect(outcomeFromJson(wire(json))).toMatchObject({ pendingApprovals, mergedWith: 2 });
  });

  it('refuses what is not an outcome, or a bad maxOutcomeBytes, with INBOX_INPUT_INVALID', () => {
    for (const bad of [null, 'x', { sessionKey: 's' }, { ...base, status: 'done' }]) {
      expectCode(
        thrown(() => outcomeToJson(bad as Outcome)),
        'INBOX_INPUT_INVALID',
      );
      expectCode(
        thrown(() => outcomeFromJson(bad as OutcomeJson)),
        'INBOX_INPUT_INVALID',
      );
    }
    for (const max of [-1, 1.5, Number.NaN]) {
      expectCode(
        thrown(() => outcomeToJson(outcome('completed'), { maxOutcomeBytes: max })),
        'INBOX_INPUT_INVALID',
      );
    }
    const json = outcomeToJson(outcome('completed'));
    expectCode(
      thrown(() => outcomeFromJson({ ...json, decidedBy: { tier: 'nope' } } as unknown as OutcomeJson)),
      'INBOX_INPUT_INVALID',
    );
  });
});

describe('signalyardErrorToJson and signalyardErrorFromJson', () => {
  it('never throws on odd values: a plain Error, a string, a hostile proxy', () => {
    expect(signalyardErrorToJson(new Error('plain'))).toEqual({ code: 'UNKNOWN_ERROR', message: 'plain', fields: {} });
    expect(signalyardErrorToJson('text').code).toBe('UNKNOWN_ERROR');
    const hostile = new Proxy(
      {},
      {
        get() {
          throw new Error('no');
        },
        ownKeys() {
          throw new Error('no');
        },
      },
    );
    expect(signalyardErrorToJson(hostile).code).toBe('UNKNOWN_ERROR');
  });

  it('a "__proto__" field stays a plain field and does not change the prototype', () => {
    const json = JSON.parse('{"code":"X","message":"m","fields":{"__proto__":{"polluted":true},"a":1}}') as never;
    const error = signalyardErrorFromJson(json);
    expect(SignalyardError.isInstance(error)).toBe(true);
    expect(Object.getPrototypeOf(error)).toBe(SignalyardError.prototype);
    expect((error as unknown as { polluted?: unknown }).polluted).toBeUndefined();
    expect((error as unknown as { a: unknown }).a).toBe(1);
  });

  it('refuses malformed error JSON with INBOX_INPUT_INVALID', () => {
    for (const bad of [
      null,
      { code: '', message: 'm' },
      { code: 'X' },
      { code: 'X', message: 'm', fields: [] },
      { code: 'X', message: 'm', cause: 'c' },
    ]) {
      expectCode(
        thrown(() => signalyardErrorFromJson(bad as never)),
        'INBOX_INPUT_INVALID',
      );
    }
  });
});
