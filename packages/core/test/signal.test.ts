import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { SignalKind, isSignalKind, signal } from '@signalyard/core';
import { throwsCode } from './helpers.js';

const BUILT_IN = ['user_message', 'tool_result', 'tool_approval', 'stop', 'timer'] as const;

describe('SignalKind', () => {
  it('has the five built-in kinds with their wire values', () => {
    expect(SignalKind.UserMessage).toBe('user_message');
    expect(SignalKind.ToolResult).toBe('tool_result');
    expect(SignalKind.ToolApproval).toBe('tool_approval');
    expect(SignalKind.Stop).toBe('stop');
    expect(SignalKind.Timer).toBe('timer');
  });

  it('is frozen: the built-in kinds cannot be reassigned', () => {
    expect(Object.isFrozen(SignalKind)).toBe(true);
    expect(() => {
      (SignalKind as { Stop: string }).Stop = 'halt';
    }).toThrow(TypeError);
    expect(SignalKind.Stop).toBe('stop');
  });

  it('custom(name) makes the kind "custom:<name>"', () => {
    expect(SignalKind.custom('webhook')).toBe('custom:webhook');
    expect(SignalKind.custom('a:b c')).toBe('custom:a:b c');
  });

  it('a custom kind never equals a built-in kind', () => {
    expect(SignalKind.custom('stop')).not.toBe(SignalKind.Stop);
    for (const kind of BUILT_IN) expect(SignalKind.custom(kind)).not.toBe(kind);
  });

  it('a custom kind made from any non-blank name is a valid kind and never a built-in one', () => {
    fc.assert(
      fc.property(
        fc.string().filter((s) => s.trim() !== ''),
        (name) => {
          const kind = SignalKind.custom(name);
          expect(kind).toBe(`custom:${name}`);
          expect(isSignalKind(kind)).toBe(true);
          expect(BUILT_IN as readonly string[]).not.toContain(kind);
        },
      ),
    );
  });

  it.each([
    ['an empty name', '', '""'],
    ['a blank name', '   ', '"   "'],
    ['a whitespace-only name', '\t\n', '"\\t\\n"'],
  ])('custom() rejects %s with SIGNAL_KIND_INVALID naming the value', (_title, bad, shown) => {
    const error = throwsCode(() => SignalKind.custom(bad), 'SIGNAL_KIND_INVALID');
    expect(error.message).toContain(shown);
  });

  it.each<[string, unknown, string]>([
    ['a number', 42, '42'],
    ['null', null, 'null'],
    ['undefined', undefined, 'undefined'],
    ['an object', { name: 'x' }, '{"name":"x"}'],
    ['an array', ['x'], '["x"]'],
    ['a symbol', Symbol('s'), 'Symbol(s)'],
    ['a BigInt', 7n, '7n'],
    ['a function', () => 'x', 'a function'],
  ])('custom() rejects %s (not a string) with SIGNAL_KIND_INVALID naming the value', (_title, bad, shown) => {
    const error = throwsCode(() => SignalKind.custom(bad as string), 'SIGNAL_KIND_INVALID');
    expect(error.message).toContain(shown);
  });
});

describe('isSignalKind', () => {
  it.each([...BUILT_IN, 'custom:webhook', 'custom:stop', 'custom: x', 'custom:custom:'])('accepts %j', (value) => {
    expect(isSignalKind(value)).toBe(true);
  });

  it.each([
    ['custom: with no name', 'custom:'],
    ['custom: with a blank name', 'custom:   '],
    ['a differently cased built-in', 'Stop'],
    ['an upper-case built-in', 'USER_MESSAGE'],
    ['a built-in with a trailing space', 'stop '],
    ['a built-in with a leading space', ' stop'],
    ['the bare word custom', 'custom'],
    ['a custom prefix with another separator', 'custom_stop'],
    ['the empty string', ''],
    ['a number', 1],
    ['null', null],
    ['undefined', undefined],
    ['a boxed string', Object('stop')],
    ['an object', { kind: 'stop' }],
  ])('rejects %s', (_title, value) => {
    expect(isSignalKind(value)).toBe(false);
  });
});

describe('signal()', () => {
  it('keeps the kind and the payload', () => {
    const payload = { text: 'hello' };
    const s = signal(SignalKind.UserMessage, payload);
    expect(s.kind).toBe('user_message');
    expect(s.payload).toBe(payload);
  });

  it('defaults the payload to null', () => {
    expect(signal(SignalKind.Timer)).toEqual({ kind: 'timer', payload: null });
    expect(signal(SignalKind.Timer).payload).toBeNull();
  });

  it('turns an explicit undefined payload into null', () => {
    expect(signal(SignalKind.Stop, undefined).payload).toBeNull();
  });

  it.each([0, '', false, Number.NaN])('keeps a falsy payload %j as given', (payload) => {
    expect(signal(SignalKind.ToolResult, payload).payload).toBe(payload);
  });

  it('accepts custom kinds', () => {
    expect(signal(SignalKind.custom('webhook'), 1)).toEqual({ kind: 'custom:webhook', payload: 1 });
  });

  it('returns a frozen signal', () => {
    const s = signal(SignalKind.UserMessage, 'hi');
    expect(Object.isFrozen(s)).toBe(true);
    expect(() => {
      (s as { payload: unknown }).payload = 'changed';
    }).toThrow(TypeError);
    expect(s.payload).toBe('hi');
  });

  it('makes a new signal on every call', () => {
    expect(signal(SignalKind.Stop)).not.toBe(signal(SignalKind.Stop));
  });

  it.each([
    ['an unknown kind', 'bogus', '"bogus"'],
    ['custom: with no name', 'custom:', '"custom:"'],
    ['a differently cased kind', 'Stop', '"Stop"'],
    ['a number', 3, '3'],
    ['null', null, 'null'],
    ['undefined', undefined, 'undefined'],
    [
      'an object that cannot be shown as JSON',
      (() => {
        const o: Record<string, unknown> = {};
        o.self = o;
        return o;
      })(),
      'an object',
    ],
    ['a long object', { text: 'x'.repeat(200) }, '...'],
  ])('rejects %s with SIGNAL_KIND_INVALID naming the value', (_title, kind, shown) => {
    const error = throwsCode(() => signal(kind as never), 'SIGNAL_KIND_INVALID');
    expect(error.message).toContain(shown);
  });
});
