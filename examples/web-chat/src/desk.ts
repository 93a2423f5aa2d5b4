// The web chat's support desk: a crew (triage → billing by a transfer tool call, billing's refund
// tool, an approval policy for refunds over $100; the next message resumes at the agent that
// answered) as the engine of one Runner over a SQLite store, and the models it can run on — a
// scripted one by default, the real AI SDK provider with a key.
import { readFileSync } from 'node:fs';
import { openai } from '@ai-sdk/openai';
import { aiSdkModel } from '@signalyard/ai-sdk';
import type { ChatModel, ChatRequest, ChatResponse, ChatStreamPart, Inbox, Tool } from '@signalyard/core';
import { scriptedModel } from '@signalyard/core/testing';
import { SqliteCheckpointStore } from '@signalyard/store-sqlite';
import {
  RouteResolver,
  createRunner,
  crewEngine,
  formatSessionKey,
  parseCrewConfig,
  type CrewConfigInput,
  type Runner,
  type RunnerOptions,
} from 'signalyard';

/** The crew, from config/desk-crew.yaml. */
const deskCrew = parseCrewConfig(readFileSync(new URL('../config/desk-crew.yaml', import.meta.url), 'utf8'));

/** Every browser chat is a DM of the `web` channel to the `desk` agent. */
const routing = { defaultAgentId: 'desk' };
const resolver = new RouteResolver(routing);

/** The session key of the browser chat `chatId` (the same key `runner.stream` resolves the chat's messages to). */
export const sessionKeyOf = (chatId: string): string =>
  formatSessionKey(resolver.resolve({ channel: 'web', peer: { kind: 'dm', id: chatId } }).sessionKey);

/** The chat id of a web chat's session key (as the key keeps it: lower case); `undefined` for another key. */
export function chatIdOf(sessionKey: string): string | undefined {
  const prefix = sessionKeyOf('x').slice(0, -1);
  return sessionKey.startsWith(prefix) ? sessionKey.slice(prefix.length) : undefined;
}

/** What the refund tool did: the amounts refunded, in order (the tests read it). */
export interface RefundLedger {
  readonly refunds: { invoice: string; amount: number; reference: string }[];
}

/** Billing's refund tool. Refunds over $100 wait for a person (the crew's `approvals:` policy). */
function refundTool(ledger: RefundLedger): Tool {
  return {
    name: 'refund',
    description: 'Refund an amount in dollars on an invoice to the customer’s card.',
    parameters: {
      type: 'object',
      properties: { invoice: { type: 'string' }, amount: { type: 'number' } },
      required: ['invoice', 'amount'],
      additionalProperties: false,
    },
    execute: (args) => {
      const { invoice, amount } = args as { invoice: string; amount: number };
      const reference = `RF-${1017 + ledger.refunds.length}`;
      ledger.refunds.push({ invoice, amount, reference });
      return Promise.resolve({ refunded: amount, invoice, reference });
    },
  };
}

const lastUserText = (request: ChatRequest): string =>
  request.messages.findLast((m) => m.role === 'user')?.content ?? '';

/**
 * A reply that ends with a call to the transfer tool `name` (crew.yaml `handoff_mode: tool`):
 * `transfer_to_billing` hands off, `finish` ends the turn. Call ids are unique in the history.
 */
const transfer = (request: ChatRequest, content: string, name: string): ChatResponse => ({
  content,
  toolCalls: [{ id: `${name}-${request.messages.length}`, name, arguments: {} }],
});

/** Billing's scripted reply: a refund call when asked for one, the outcome after the tool ran. */
function billingReply(request: ChatRequest): ChatResponse {
  const last = request.messages.at(-1);
  const call = request.messages.flatMap((m) => m.toolCalls ?? []).find((c) => c.id === last?.toolCallId);
  // The answer to the refund call (not to triage's transfer call, which billing sees first).
  if (last?.role === 'tool' && call?.name === 'refund') {
    const amount = (call.arguments as { amount?: number } | undefined)?.amount ?? 0;
    if (last.content.startsWith('denied')) {
      return transfer(
        request,
        `The refund of $${amount} was not approved, so nothing has been refunded. If you think this is wrong, reply here and a supervisor will take a look.`,
        'finish',
      );
    }
    const reference = /RF-\d+/.exec(last.content)?.[0] ?? 'RF-?';
    return transfer(
      request,
      `Done: $${amount} is on its way back to your card (reference ${reference}). It can take three to five business days to show up.`,
      'finish',
    );
  }
  const said = lastUserText(request);
  const asked = /refund[^$]*\$(\d+(?:\.\d+)?)/i.exec(said) ?? /\$(\d+(?:\.\d+)?)[^.]*refund/i.exec(said);
  if (asked !== null) {
    const amount = Number(asked[1]);
    return {
      content: `Of course. I am requesting a refund of $${amount} on invoice INV-881.`,
      toolCalls: [
        { id: `refund-${request.messages.length}`, name: 'refund', arguments: { invoice: 'INV-881', amount } },
      ],
    };
  }
  return transfer(
    request,
    'I am sorry about that! I can see invoice INV-881 was charged twice, $42 each time. I can refund the duplicate charge right away: just tell me how much you want back.',
    'finish',
  );
}

/**
 * The scripted desk model: answers by agent and by what the customer said, handing off and
 * finishing with transfer tool calls as a tool-calling model does. Deterministic, no key.
 */
export function scriptedDeskModel(opts: { chunkChars?: number } = {}): ChatModel {
  return scriptedModel(
    (request) => {
      if (request.agentId === 'billing') return billingReply(request);
      if (/invoice|charge|refund|bill/i.test(lastUserText(request))) {
        return transfer(
          request,
          'Thanks for reaching out. That is a billing question, so I am passing you to our billing team.',
          'transfer_to_billing',
        );
      }
      return transfer(request, 'Happy to help! Could you tell me a little more about what went wrong?', 'finish');
    },
    { streamChunkChars: opts.chunkChars ?? 3 },
  );
}

const pause = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * `model`, with a pause of `chunkDelayMs` before each streamed text delta, as a provider's
 * tokens arrive over the network: in a browser the reply visibly grows.
 */
export function paced(model: ChatModel, chunkDelayMs: number): ChatModel {
  if (chunkDelayMs <= 0) return model;
  return {
    generate: (request) => model.generate(request),
    async *stream(request): AsyncGenerator<ChatStreamPart> {
      const parts = model.stream?.(request);
      if (parts === undefined) {
        const response = await model.generate(request);
        yield* [
          ...(response.content === '' ? [] : [{ type: 'text-delta' as const, delta: response.content }]),
          ...(response.toolCalls ?? []).map((call) => ({ type: 'tool-call' as const, call })),
          { type: 'finish' as const, response },
        ];
        return;
      }
      for await (const part of parts) {
        if (part.type === 'text-delta') await pause(chunkDelayMs);
        yield part;
      }
    },
  };
}

/** The model the desk runs on: OpenAI through the AI SDK when OPENAI_API_KEY is set, else the scripted desk. */
export function defaultModel(env: NodeJS.ProcessEnv = process.env): { model: ChatModel; name: string } {
  const key = env.OPENAI_API_KEY;
  if (key !== undefined && key !== '') {
    const name = env.OPENAI_MODEL ?? 'gpt-4o-mini';
    return { model: aiSdkModel(openai(name), { temperature: 0 }), name: `openai:${name}` };
  }
  return { model: paced(scriptedDeskModel(), 25), name: 'scripted (set OPENAI_API_KEY for a real model)' };
}

/** Options of {@link deskRunner}. */
export interface DeskRunnerOptions {
  /** The SQLite file the sessions live in (`':memory:'` for none). */
  readonly dbPath: string;
  /** The model every agent calls. */
  readonly model: ChatModel;
  /** Where the refund tool records its refunds. */
  readonly ledger?: RefundLedger;
  /** The crew (default: config/desk-crew.yaml), e.g. one with a parallel group for a test. */
  readonly crew?: CrewConfigInput;
  /**
   * A durable inbox (`--workers N`: a `SqliteInbox` on the same file). Without one, this process
   * applies every turn itself, in its own queue.
   */
  readonly inbox?: Inbox;
  /** With `inbox`: `false` for the web tier (it only accepts), or the worker's options. */
  readonly worker?: RunnerOptions['worker'];
}

/**
 * The desk's Runner: one `desk` agent whose engine is the crew, sessions on SQLite; with an
 * `inbox`, the web tier (`worker: false`) or one of its workers (see desk-workers.ts).
 */
export function deskRunner(opts: DeskRunnerOptions): Runner {
  const ledger = opts.ledger ?? { refunds: [] };
  const engine = crewEngine(opts.crew ?? deskCrew, { model: opts.model, tools: [refundTool(ledger)] });
  return createRunner({
    agents: [{ id: 'desk', engine }],
    routing,
    store: new SqliteCheckpointStore({ path: opts.dbPath }),
    ...(opts.inbox === undefined ? {} : { inbox: opts.inbox }),
    ...(opts.worker === undefined ? {} : { worker: opts.worker }),
  });
}
