import { Action, ConfigError, SignalKind } from '@signalyard/core';
import { createRunner } from 'signalyard';
import { describe, expect, it } from 'vitest';
import {
  cardNumber,
  email,
  luhnValid,
  phone,
  piiGatePlugin,
  redact,
  secretToken,
  type RedactedMessage,
} from 'signalyard-plugin-pii-gate';

const engine = async () => ({ messages: [{ role: 'assistant' as const, content: 'ok' }], output: 'engine ran' });

describe('detectors', () => {
  it('finds card numbers that pass Luhn, grouped or not, and nothing else', () => {
    expect(cardNumber.find('pay with 4111 1111 1111 1111 now').map((f) => f.detector)).toEqual(['card_number']);
    expect(cardNumber.find('4111-1111-1111-1111')).toHaveLength(1);
    expect(cardNumber.find('order 4111111111111112 (not a card)')).toEqual([]);
    expect(cardNumber.find('call 12345')).toEqual([]);
    expect(luhnValid('79927398713')).toBe(false); // valid Luhn but too short for a card
    expect(luhnValid('4012 8888 8888 1881')).toBe(true);
  });

  it('finds secret tokens, e-mail addresses and phone numbers', () => {
    expect(secretToken.find('key sk-abcdefghijklmnopqrstuvwxyz123456')).toHaveLength(1);
    expect(email.find('write to jane.doe@example.co.uk please')).toEqual([{ detector: 'email', start: 9, end: 31 }]);
    expect(phone.find('ring +44 20 7946 0958')).toHaveLength(1);
    expect(email.find('not@an address')).toEqual([]);
  });

  it('redacts findings, merging overlaps', () => {
    const text = 'a@b.io and +1 555 010 9999';
    expect(redact(text, [...email.find(text), ...phone.find(text)])).toBe('[REDACTED:email] and [REDACTED:phone]');
    expect(
      redact('abcdef', [
        { detector: 'x', start: 1, end: 4 },
        { detector: 'y', start: 2, end: 3 },
      ]),
    ).toBe('a[REDACTED:x]ef');
    expect(redact('nothing here', [])).toBe('nothing here');
  });
});

describe('piiGatePlugin in a Runner', () => {
  it('rejects a message with a card number from the plugin tier, without running the engine', async () => {
    const runner = createRunner({ agents: [{ id: 'support', engine }], plugins: [piiGatePlugin()] });
    const o = await runner.handle({ channel: 'cli', text: 'my card: 4111 1111 1111 1111' });
    expect(o.status).toBe('rejected');
    expect(o.action).toEqual(Action.reject('pii_detected'));
    expect(o.decidedBy).toMatchObject({ tier: 'plugin', route: { name: 'pii-reject' } });
    expect(o.output).toBeUndefined();
    await runner.close();
  });

  it('routes a message with an e-mail address to the redact custom action, whose output is the redacted text', async () => {
    const runner = createRunner({ agents: [{ id: 'support', engine }], plugins: [piiGatePlugin()] });
    const o = await runner.handle({ channel: 'cli', text: 'reach me at jane@example.com' });
    expect(o.status).toBe('completed');
    expect(o.action).toEqual(Action.custom('redact'));
    expect((o.output as RedactedMessage).text).toBe('reach me at [REDACTED:email]');
    await runner.close();
  });

  it('lets clean messages through to the engine', async () => {
    const runner = createRunner({ agents: [{ id: 'support', engine }], plugins: [piiGatePlugin()] });
    const o = await runner.handle({ channel: 'cli', text: 'where is my parcel?' });
    expect(o.status).toBe('completed');
    expect(o.output).toBe('engine ran');
    await runner.close();
  });

  it('is a default: an agent with its own user-message route overrides it', async () => {
    const runner = createRunner({
      agents: [{ id: 'support', engine, routes: [{ kind: SignalKind.UserMessage, action: Action.Continue }] }],
      plugins: [piiGatePlugin()],
    });
    expect((await runner.handle({ channel: 'cli', text: '4111 1111 1111 1111' })).status).toBe('completed');
    await runner.close();
  });

  it('takes custom detector lists and refuses malformed ones', async () => {
    const runner = createRunner({
      agents: [{ id: 'support', engine }],
      plugins: [piiGatePlugin({ reject: [email], redact: [] })],
    });
    expect((await runner.handle({ channel: 'cli', text: 'x@y.io' })).status).toBe('rejected');
    await runner.close();
    expect(() => piiGatePlugin({ reject: [{ name: 'bad' } as never] })).toThrow(ConfigError);
    expect(() => piiGatePlugin({ redact: 'email' as never })).toThrow(ConfigError);
  });

  it('two runners with the gate do not clash (no global state)', async () => {
    const a = createRunner({ agents: [{ id: 'a', engine }], plugins: [piiGatePlugin()] });
    const b = createRunner({ agents: [{ id: 'b', engine }], plugins: [piiGatePlugin()] });
    expect((await a.handle({ channel: 'cli', text: 'a@b.io' })).status).toBe('completed');
    expect((await b.handle({ channel: 'cli', text: 'a@b.io' })).status).toBe('completed');
    await Promise.all([a.close(), b.close()]);
  });
});
