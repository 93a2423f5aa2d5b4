import { ConfigError, MemoryInbox } from '@signalyard/core';
import { describe, expect, it } from 'vitest';
import { underTest } from '../src/testing/inbox-conformance-support.js';

describe('inboxConformance factory results', () => {
  it('takes a bare inbox as { inbox }', () => {
    const inbox = new MemoryInbox();
    expect(underTest(inbox)).toEqual({ inbox });
  });

  it('takes { inbox, … } as it is', () => {
    const made = { inbox: new MemoryInbox(), cleanup: () => undefined };
    expect(underTest(made)).toBe(made);
  });

  it.each([undefined, null, 42, 'inbox', {}, { inbox: {} }, { inbox: null }])(
    'refuses %j with CONFIG_INVALID naming the value',
    (made) => {
      let thrown: unknown;
      try {
        underTest(made as never);
      } catch (error) {
        thrown = error;
      }
      expect(ConfigError.isInstance(thrown)).toBe(true);
      expect((thrown as ConfigError).code).toBe('CONFIG_INVALID');
      expect((thrown as ConfigError).message).toContain('must return an Inbox');
    },
  );
});
