// The desk of `--workers` mode: one crew agent, `courier`, that answers parcel questions and
// looks tracking up with a slow tool. Its model is a function of the conversation (not a script
// consumed in order), so any worker process answers a turn the same way.
import type { ChatRequest, ChatResponse } from '@signalyard/core';
import { scriptedModel } from '@signalyard/core/testing';
import { crewEngine, type AgentDefinition, type CrewConfigInput } from 'signalyard';

/** The session of the story's customer. */
export const COURIER_SESSION = 'agent:desk:telegram:dm:2001';

const crew: CrewConfigInput = {
  entryPoint: 'courier',
  agents: [{ id: 'courier', tools: ['track_order'] }],
  routing: { signals: { courier: [{ signal: '[DONE]', target: '' }] } },
  settings: { hideSignals: true },
};

/** What the courier says to each message (by a word in it), and after the tracking lookup. */
function answer(request: ChatRequest): string | ChatResponse {
  const last = request.messages.at(-1);
  if (last?.role === 'tool') return `Tracking for order 6120: ${last.content}. [DONE]`;
  const text = (last?.content ?? '').toLowerCase();
  if (text.includes('tracking'))
    return { content: '', toolCalls: [{ id: 'track-1', name: 'track_order', arguments: { order: '6120' } }] };
  if (text.includes('resend')) return 'Done: a replacement for order 6120 ships today. [DONE]';
  return 'Sorry about that! I have opened a case for order 6120. [DONE]';
}

/**
 * The desk's agent. `onTool` hears each `track_order` call as it starts, with its
 * `ToolContext.idempotencyKey`; the lookup then takes `lookupMs`.
 */
export function courierAgent(
  onTool: (call: { args: unknown; idempotencyKey: string | undefined }) => void,
  lookupMs = 1500,
): AgentDefinition {
  const model = scriptedModel(answer, { streamChunkChars: 8 });
  return {
    id: 'desk',
    engine: crewEngine(crew, {
      model,
      tools: [
        {
          name: 'track_order',
          description: 'Looks an order up with the carrier',
          parameters: { type: 'object', properties: { order: { type: 'string' } }, required: ['order'] },
          execute: async (args, ctx) => {
            onTool({ args, idempotencyKey: ctx.idempotencyKey });
            await new Promise((resolve) => setTimeout(resolve, lookupMs));
            return 'held at the depot since Monday';
          },
        },
      ],
    }),
  };
}
