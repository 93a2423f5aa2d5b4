// Handoffs as tool calls through the AI SDK: transfer tools are offered to the provider as tools
// like any other, the provider's call to one is the handoff, and the UI message a page reads —
// live or after a reload — is the same as with markers: a `data-handoff` part, no `tool-*` part.
import { describe, expect, it } from 'vitest';
import type { ChatResponse, TurnEvent } from '@signalyard/core';
import { scriptedModel } from '@signalyard/core/testing';
import { CrewExecutor, parseCrewConfig, type CrewEvent, type HandoffMode } from '@signalyard/crew';
import { createRunner, crewEngine } from 'signalyard';
import type { UIMessage } from 'ai';
import { aiSdkModel, toUIMessageStream, transcriptToUIMessages } from '@signalyard/ai-sdk';
import { mockModel, mockStreamModel, reply, streamParts, toolCallPart } from './support.js';
import { readMessage } from './ui-support.js';

const crewIn = (mode: HandoffMode) =>
  parseCrewConfig(
    `
entry_point: triage
agents:
  - id: triage
    system_prompt: Route the customer.
  - id: billing
    name: Billing
    description: Invoices and refunds.
settings:
  handoff_mode: ${mode}
routing:
  signals:
    triage:
      - { signal: "[ROUTE_BILLING]", target: billing, description: "Money questions." }
    billing:
      - { signal: "[DONE]", target: "" }
`,
    { file: 'crew.yaml' },
  );

describe('transfer tools through aiSdkModel', () => {
  it('are offered to the provider as tools; the provider’s call to one hands off, answered with a tool result it accepts', async () => {
    const mock = mockModel(
      reply([toolCallPart('call-1', 'transfer_to_billing', { reason: 'a refund' })]),
      reply([{ type: 'text', text: 'Refunded.' }, toolCallPart('call-2', 'finish', {})]),
    );
    const executor = new CrewExecutor({ crew: crewIn('tool'), model: aiSdkModel(mock) });
    const events: CrewEvent[] = [];
    for await (const event of executor.executeStream('refund please', { textDeltas: false })) events.push(event);
    expect(events.filter((e) => e.type === 'handoff')).toEqual([
      {
        type: 'handoff',
        from: 'triage',
        to: 'billing',
        via: 'signal',
        signal: '[ROUTE_BILLING]',
        tool: 'transfer_to_billing',
        reason: 'a refund',
        handoffs: 1,
      },
    ]);
    expect(events.at(-1)).toMatchObject({ type: 'end', response: { agentId: 'billing', visibleContent: 'Refunded.' } });

    const [first, second] = mock.doGenerateCalls;
    expect(first!.tools).toEqual([
      {
        type: 'function',
        name: 'transfer_to_billing',
        description: 'Transfer the conversation to Billing (agent "billing"). Invoices and refunds. Money questions.',
        inputSchema: expect.objectContaining({ type: 'object', additionalProperties: false }),
      },
    ]);
    expect(second!.tools?.map((t) => t.name)).toEqual(['finish']);
    // Billing's request carries the transfer call and its answer as the provider expects them.
    expect(second!.prompt.slice(-2)).toEqual([
      {
        role: 'assistant',
        content: [
          { type: 'tool-call', toolCallId: 'call-1', toolName: 'transfer_to_billing', input: { reason: 'a refund' } },
        ],
      },
      {
        role: 'tool',
        content: [
          {
            type: 'tool-result',
            toolCallId: 'call-1',
            toolName: 'transfer_to_billing',
            output: { type: 'text', value: 'transferred to billing' },
          },
        ],
      },
    ]);
  });

  it('streamed through the provider: the transfer call arrives as a tool-call part and hands off the same way', async () => {
    const mock = mockStreamModel(
      streamParts(['Passing you ', 'to billing.'], {
        toolCalls: [{ id: 'call-1', name: 'transfer_to_billing', input: {} }],
      }),
      streamParts(['Done.'], { toolCalls: [{ id: 'call-2', name: 'finish', input: {} }] }),
    );
    const executor = new CrewExecutor({ crew: crewIn('tool'), model: aiSdkModel(mock) });
    const events: CrewEvent[] = [];
    for await (const event of executor.executeStream('hi')) events.push(event);
    expect(events.flatMap((e) => (e.type === 'text_delta' ? [`${e.path.join('>')}:${e.delta}`] : []))).toEqual([
      'triage:Passing you',
      'triage: to billing.',
      'triage>billing:Done.',
    ]);
    expect(events.filter((e) => e.type === 'handoff').map((e) => e.type === 'handoff' && e.tool)).toEqual([
      'transfer_to_billing',
    ]);
  });
});

describe('the page looks the same in both modes', () => {
  /** The desk's replies in `mode`: the marker in the text, or a call to its transfer tool. */
  const scripted = (mode: HandoffMode) => {
    const hand = (text: string, marker: string, tool: string, id: string): string | ChatResponse =>
      mode === 'marker' ? `${text} ${marker}` : { content: text, toolCalls: [{ id, name: tool, arguments: {} }] };
    return scriptedModel(
      {
        triage: [hand('Billing will take this.', '[ROUTE_BILLING]', 'transfer_to_billing', 't1')],
        billing: [hand('Refund on its way.', '[DONE]', 'finish', 't2')],
      },
      { streamChunkChars: 4 },
    );
  };

  async function pageOf(mode: HandoffMode): Promise<{ live: UIMessage | undefined; reloaded: UIMessage[] }> {
    const runner = createRunner({
      agents: [{ id: 'desk', engine: crewEngine(crewIn(mode), { model: scripted(mode) }) }],
    });
    const turn = runner.stream({ channel: 'web', peer: { kind: 'dm', id: '7' }, text: 'refund please' });
    const { message, errors } = await readMessage(
      toUIMessageStream(turn as AsyncIterable<TurnEvent>, { messageId: 'm1' }),
    );
    expect(errors).toEqual([]);
    const outcome = await turn.outcome;
    const reloaded = transcriptToUIMessages(await runner.transcript(outcome.sessionKey));
    await runner.close();
    return { live: message, reloaded };
  }

  it('a transfer is the same data-handoff part as a marker; no tool-* part for it; a reload renders the same', async () => {
    const marker = await pageOf('marker');
    const tool = await pageOf('tool');
    expect(tool.live?.parts.map((p) => p.type)).toEqual(['data-route', 'text', 'data-handoff', 'text']);
    expect(tool.live?.parts.find((p) => p.type === 'data-handoff')).toEqual({
      type: 'data-handoff',
      data: { from: 'triage', to: 'billing' },
    });
    expect(tool.live).toEqual(marker.live);
    expect(tool.reloaded).toEqual(marker.reloaded);
    expect(JSON.stringify(tool.reloaded)).not.toContain('transfer_to');
  });

  it('includeSignals: a transfer shows its marker and the tool it was called as', async () => {
    const runner = createRunner({
      agents: [{ id: 'desk', engine: crewEngine(crewIn('tool'), { model: scripted('tool') }) }],
    });
    const turn = runner.stream({ channel: 'web', peer: { kind: 'dm', id: '8' }, text: 'refund please' });
    const { message } = await readMessage(toUIMessageStream(turn, { includeSignals: true, sendRouting: false }));
    expect(message?.parts.find((p) => p.type === 'data-handoff')).toEqual({
      type: 'data-handoff',
      data: { from: 'triage', to: 'billing', via: 'signal', signal: '[ROUTE_BILLING]', tool: 'transfer_to_billing' },
    });
    await runner.close();
  });
});
