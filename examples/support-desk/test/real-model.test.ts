// The real-model recipe (src/real-model.ts), run on the scripted model as CI runs it: the same
// conversation a real model would have, handing off by transfer tool calls and continuing with
// the agent that answered.
import { describe, expect, it } from 'vitest';
import { deskModel } from '../src/desk.js';
import { CONVERSATION, modelFromEnv, talkToDesk } from '../src/real-model.js';

describe('the support desk on a model picked from the environment', () => {
  it('uses OpenAI through the AI SDK when OPENAI_API_KEY is set, else the scripted desk', () => {
    expect(modelFromEnv({}).name).toBe('scripted (set OPENAI_API_KEY for OpenAI)');
    expect(modelFromEnv({ OPENAI_API_KEY: '' }).name).toMatch(/^scripted/);
    const real = modelFromEnv({ OPENAI_API_KEY: 'sk-test', OPENAI_MODEL: 'gpt-4.1-mini' });
    expect(real.name).toBe('openai:gpt-4.1-mini');
    expect(typeof real.model.stream).toBe('function'); // aiSdkModel streams through streamText
  });

  it('one handoff by transfer tool, then every message goes straight to billing', async () => {
    let out = '';
    const responses = await talkToDesk(deskModel(), (text) => {
      out += text;
    });
    expect(responses.map((r) => [r.agentId, r.handoffs, r.reason])).toEqual([
      ['billing', 1, 'terminated_by_signal'],
      ['billing', 0, 'terminated_by_signal'],
      ['billing', 0, 'terminated_by_signal'],
    ]);
    expect(responses.map((r) => r.signal)).toEqual(['[PROPOSE_FIX]', '[REFUNDED]', '[ANSWERED]']);
    expect(out.match(/triage → billing by transfer_to_billing/g)).toHaveLength(1);
    expect(out).toContain('(refund → "$42 refunded for order 5531 (RF-2001)")');
    expect(out).toContain('billing: The receipt for order 5531 (Espresso machine, $420) is on its way to your email.');
    for (const text of CONVERSATION) expect(out).toContain(`customer: ${text}`);
    expect(out).not.toMatch(/\[[A-Z_]+\]/);
  });
});
