import { describe, expect, expectTypeOf, it } from 'vitest';
import { ConfigError as CoreConfigError, SignalyardError, isSignalyardError } from '@signalyard/core';
import { ConfigError, SessionKey, SessionKeyError, type SessionKeyErrorCode } from '@signalyard/sessions';
import { thrown } from './support.js';

class AppSessionKeyError extends SessionKeyError {}

describe('SessionKeyError', () => {
  const error = new SessionKeyError({ problem: 'empty peer id', input: '', message: 'bad key' });

  it('is a SignalyardError with code SESSION_KEY_INVALID and structured fields', () => {
    expect(SignalyardError.isInstance(error)).toBe(true);
    expect(isSignalyardError(error, 'SESSION_KEY_INVALID')).toBe(true);
    expect(error).toMatchObject({
      name: 'SessionKeyError',
      code: 'SESSION_KEY_INVALID',
      problem: 'empty peer id',
      input: '',
    });
    expect(error).toBeInstanceOf(Error);
  });

  it('isInstance matches its own instances and subclasses only', () => {
    expect(SessionKeyError.isInstance(error)).toBe(true);
    expect(SessionKeyError.isInstance(new AppSessionKeyError({ problem: 'p', message: 'm' }))).toBe(true);
    expect(SessionKeyError.isInstance(new SignalyardError({ code: 'SESSION_KEY_INVALID', message: 'm' }))).toBe(false);
    expect(SessionKeyError.isInstance(new CoreConfigError({ problems: [{ path: 'x', message: 'y' }] }))).toBe(false);
    expect(SessionKeyError.isInstance(new Error('m'))).toBe(false);
    expect(SessionKeyError.isInstance(null)).toBe(false);
    expect(SessionKeyError.isInstance({ code: 'SESSION_KEY_INVALID' })).toBe(false);
  });

  it('ConfigError.isInstance does not match a SessionKeyError', () => {
    expect(ConfigError.isInstance(error)).toBe(false);
  });

  it('works across duplicate installs (the marker is a Symbol.for)', () => {
    const foreign = Object.assign(new Error('from another copy'), {
      [Symbol.for('signalyard.error.SessionKeyError')]: true,
    });
    expect(SessionKeyError.isInstance(foreign)).toBe(true);
  });

  it('owns a typed union of its one code', () => {
    expectTypeOf<SessionKeyError['code']>().toEqualTypeOf<SessionKeyErrorCode>();
    expectTypeOf<SessionKeyErrorCode>().toEqualTypeOf<'SESSION_KEY_INVALID'>();
  });

  it('is what the factories throw', () => {
    const e = thrown(() => SessionKey.main(''));
    expect(SessionKeyError.isInstance(e)).toBe(true);
    expect(e).toBeInstanceOf(SessionKeyError);
  });
});

describe('ConfigError', () => {
  it('is the class of @signalyard/core, re-exported', () => {
    expect(ConfigError).toBe(CoreConfigError);
  });
});
