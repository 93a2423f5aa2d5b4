/**
 * The agents every chaos worker runs, whatever the transport (this package imports no Signalyard
 * code: a worker script passes `crewEngine` and `scriptedModel` in):
 *
 * - `crew` (sessions `agent:crew:s<n>`): a crew agent whose scripted model calls the tool `record`
 *   once per user message, then answers. `record` writes a row keyed by its
 *   `ToolContext.idempotencyKey` to the `plain` effects table (`INSERT … ON CONFLICT DO NOTHING`,
 *   no commit) and answers `wrote <key>`.
 * - `committer` (sessions `agent:committer:s<n>`): an engine that claims its write with
 *   `ctx.commit` first, then appends a row keyed by `ctx.idempotencyKey('write')` to the
 *   `committed` table (no dedupe: a second write would show), and answers `wrote <key>`. Re-applied
 *   from its claim (a worker died between the commit and the save), it answers
 *   `outcome unknown: not retried <key>` and writes nothing.
 */

/** Writes one effect row: `table` `plain` dedupes on `key`, `committed` appends. */
export type ChaosWrite = (table: 'plain' | 'committed', key: string) => Promise<void>;

/** The session key of chaos session `n`: even sessions run the crew, odd ones the committer. */
export function chaosSessionKey(n: number): string {
  return n % 2 === 0 ? `agent:crew:s${String(n)}` : `agent:committer:s${String(n)}`;
}

/** The crew config of the `crew` agent (one agent, the tool `record`, ends on `[DONE]`). */
export const CHAOS_CREW = {
  entryPoint: 'clerk',
  agents: [{ id: 'clerk', tools: ['record'] }],
  routing: { signals: { clerk: [{ signal: '[DONE]', target: '' }] } },
} as const;

interface ScriptRequest {
  readonly messages: readonly { readonly role: string; readonly content: string }[];
}

/**
 * The scripted model's answer to every request: after a user message, one `record` call (its id
 * from the message); after the tool's answer, `done <message> [DONE]`.
 */
export function chaosModelStep(request: ScriptRequest): unknown {
  const last = request.messages.at(-1);
  if (last?.role === 'tool') return `done [DONE]`;
  const text = last?.content ?? '';
  return { content: '', toolCalls: [{ id: `call-${text}`, name: 'record', arguments: { note: text } }] };
}

/** The `record` tool (a `Tool` of core, structurally). */
export function chaosRecordTool(write: ChaosWrite): {
  name: string;
  description: string;
  parameters: Record<string, unknown>;
  execute(args: unknown, ctx: { idempotencyKey?: string }): Promise<string>;
} {
  return {
    name: 'record',
    description: 'Records the note as an effect keyed by the call’s idempotency key',
    parameters: { type: 'object', properties: { note: { type: 'string' } } },
    async execute(_args, ctx) {
      const key = ctx.idempotencyKey;
      if (key === undefined) throw new Error('record needs ToolContext.idempotencyKey');
      await write('plain', key);
      return `wrote ${key}`;
    },
  };
}

/** What the committer engine reads of its TurnContext. */
interface CommitterContext {
  readonly state: unknown;
  idempotencyKey(name: string): string;
  commit(state: unknown): Promise<void>;
}

/** The `committer` agent's engine (an `EngineFn`, structurally). */
export function chaosCommitterEngine(write: ChaosWrite): (ctx: CommitterContext) => Promise<{
  messages: { role: 'assistant'; content: string }[];
  state: object;
}> {
  return async (ctx) => {
    const key = ctx.idempotencyKey('write');
    const claimed = (ctx.state as { claimed?: unknown } | undefined)?.claimed;
    if (claimed === key)
      return { messages: [{ role: 'assistant', content: `outcome unknown: not retried ${key}` }], state: {} };
    await ctx.commit({ claimed: key });
    await write('committed', key);
    return { messages: [{ role: 'assistant', content: `wrote ${key}` }], state: {} };
  };
}
