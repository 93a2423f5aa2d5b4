// The support desk against a real model: `pnpm --filter @signalyard-examples/support-desk real-model`
// with OPENAI_API_KEY set (OPENAI_MODEL picks the model, default gpt-4o-mini) runs the desk's crew
// on OpenAI through `@signalyard/ai-sdk`'s `aiSdkModel`. The crew hands off by transfer tool calls
// (`handoff_mode: tool` in config/desk-crew.yaml): the transfer tools are handed to the model as
// tools like its own, and the customer's next message goes to the agent that answered last
// (`resume_at: last_agent`). Without a key it runs the same conversation on the scripted model
// (as CI does).
import { pathToFileURL } from 'node:url';
import { openai } from '@ai-sdk/openai';
import { aiSdkModel } from '@signalyard/ai-sdk';
import { MemoryCheckpointStore, type ChatModel } from '@signalyard/core';
import type { CrewResponse } from 'signalyard';
import { createDesk, deskModel } from './desk.js';
import { connectOrders } from './orders.js';

/** The model the recipe runs on: OpenAI through the AI SDK when `OPENAI_API_KEY` is set, else the scripted desk model. */
export function modelFromEnv(env: NodeJS.ProcessEnv = process.env): { model: ChatModel; name: string } {
  const key = env.OPENAI_API_KEY;
  if (key === undefined || key === '') return { model: deskModel(), name: 'scripted (set OPENAI_API_KEY for OpenAI)' };
  const name = env.OPENAI_MODEL ?? 'gpt-4o-mini';
  return { model: aiSdkModel(openai(name), { temperature: 0 }), name: `openai:${name}` };
}

/** What the customer says, in order. */
export const CONVERSATION = [
  'Hi, my invoice INV-881 charged me twice',
  'Please refund order 5531, $42: it is the duplicate',
  'Thanks! Can you email me the receipt?',
] as const;

/**
 * One customer's conversation with the desk on `model`: each reply streamed as it arrives, under
 * the crew agent speaking, with the handoffs (and the transfer tool the model called) between
 * them. Returns each turn's crew response.
 */
export async function talkToDesk(model: ChatModel, write: (text: string) => void): Promise<CrewResponse[]> {
  const store = new MemoryCheckpointStore();
  const orders = await connectOrders();
  const runner = createDesk(store, model, () => undefined, orders);
  const responses: CrewResponse[] = [];
  try {
    for (const text of CONVERSATION) {
      write(`\ncustomer: ${text}\n`);
      let speaking: string | undefined;
      /** Ends the reply line being written, if one is. */
      const endLine = (): void => {
        if (speaking !== undefined) write('\n');
        speaking = undefined;
      };
      const turn = runner.stream({ channel: 'telegram', peer: { kind: 'dm', id: 'real-1' }, text });
      for await (const event of turn) {
        if (event.type === 'text_delta') {
          const who = event.source?.crewAgentId ?? event.agentId;
          if (who !== speaking) {
            endLine();
            write(`${who}: `);
          }
          speaking = who;
          write(event.delta);
        } else if (event.type === 'engine_event' && event.event.type === 'handoff') {
          const { from, to, tool, reason } = event.event;
          endLine();
          const how = `${typeof tool === 'string' ? ` by ${tool}` : ''}${typeof reason === 'string' ? `: ${reason}` : ''}`;
          write(`  (${String(from)} → ${String(to)}${how})\n`);
        } else if (event.type === 'engine_event' && event.event.type === 'tool_result') {
          endLine();
          write(`  (${(event.event.call as { name: string }).name} → ${JSON.stringify(event.event.result)})\n`);
        }
      }
      endLine();
      const outcome = await turn.outcome;
      const response = outcome.output as CrewResponse | undefined;
      if (response !== undefined) responses.push(response);
      write(`  = ${outcome.status}${outcome.pendingApprovals?.length ? ' (awaiting approval)' : ''}\n`);
    }
  } finally {
    await runner.close();
    await orders.close();
  }
  return responses;
}

// Run as a script: talk to the desk on the model the environment picks.
if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const { model, name } = modelFromEnv();
  process.stdout.write(`support desk on ${name}\n`);
  await talkToDesk(model, (text) => void process.stdout.write(text));
}
