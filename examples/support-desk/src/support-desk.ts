// The story the flagship example tells, printed as a readable transcript. `main.ts` runs it;
// the example's test runs it too and checks the transcript's key lines.
import {
  MemoryCheckpointStore,
  formatAction,
  signal,
  type CheckpointStore,
  type EngineEvent,
  type PendingApproval,
  type RunnerEvent,
  type TranscriptEntry,
} from '@signalyard/core';
import {
  RouteResolver,
  formatSessionKey,
  type ApprovalDecision,
  type AuditEntry,
  type CrewResponse,
  type Envelope,
  type InboundMessage,
  type Outcome,
  type Runner,
  type TurnStream,
} from 'signalyard';
import { createDesk, deskModel, renderReview, routing, type Refund } from './desk.js';
import { connectOrders } from './orders.js';

export interface SupportDeskOptions {
  /** Where sessions live; default: a MemoryCheckpointStore kept across the restart. */
  readonly store?: CheckpointStore;
  /** Where the transcript goes, line by line; default: stdout. */
  readonly write?: (line: string) => void;
  /**
   * Where the customer's view of a streamed reply goes, piece by piece as it arrives: a line's
   * start (`   reply   billing: "`), each text delta, then its end (`"` and a newline). Default:
   * stdout when `write` is the default too; otherwise the pieces are joined and each finished
   * line is passed to `write`.
   */
  readonly writeDelta?: (text: string) => void;
}

/** `text` pieces joined, each finished line passed to `write`. */
const linesTo = (write: (line: string) => void): ((text: string) => void) => {
  let pending = '';
  return (text) => {
    const lines = (pending + text).split('\n');
    pending = lines.pop() ?? '';
    for (const line of lines) write(line);
  };
};

/** The operator's line for an engine event (a handoff, a tool call, an approval), if it has one. */
const engineLine = (ev: EngineEvent): string | undefined => {
  if (ev.type === 'handoff') {
    // A handoff by transfer tool call names the tool the model called; by marker, the marker.
    const how =
      typeof ev.tool === 'string'
        ? `tool ${ev.tool}`
        : ev.via === 'signal'
          ? `signal ${String(ev.signal)}`
          : String(ev.via);
    return `   crew    ${String(ev.from)} → ${String(ev.to)} (${how})`;
  }
  if (ev.type === 'parallel_start')
    return `   crew    parallel group ${String(ev.group)}: ${(ev.agents as string[]).join(' + ')}`;
  if (ev.type === 'interrupt') return `   pipeline interrupt: ${(ev.interrupt as { kind: string }).kind} (paused)`;
  if (ev.type === 'stage_end') return `   pipeline stage ${String(ev.stage)} → ${String(ev.next)}`;
  if (ev.type === 'approval_requested')
    return (ev.approvals as PendingApproval[])
      .map(
        (p) =>
          `   approval ${p.id} asked: ${p.agentId} calls ${p.toolName} ${JSON.stringify(p.arguments)} (${p.reason ?? 'needs approval'})`,
      )
      .join('\n');
  if (ev.type === 'approval_resolved')
    return `   approval ${String(ev.id)} ${ev.approved === true ? 'approved' : 'denied'}`;
  if (ev.type === 'tool_result' && ev.group === undefined) {
    const mcp = ev.mcp as { server: string } | undefined;
    const result = typeof ev.result === 'string' ? `"${ev.result}"` : JSON.stringify(ev.result);
    return `   tool    ${(ev.call as { name: string }).name}${mcp === undefined ? '' : ` (MCP server ${mcp.server})`} → ${result}`;
  }
  return undefined;
};

/** One line of a session's visible conversation (`runner.transcript`). */
const transcriptLine = (entry: TranscriptEntry): string => {
  switch (entry.type) {
    case 'user':
      return `   user    "${entry.text}"`;
    case 'assistant':
      return `   ${entry.agentId.padEnd(7)} "${entry.text}"`;
    case 'handoff':
      return `   handoff ${entry.from} → ${entry.to} (${entry.via})`;
    case 'tool':
      return `   tool    ${entry.call.name} ${JSON.stringify(entry.call.arguments)}: ${entry.status}${entry.result === undefined ? '' : ` ${JSON.stringify(entry.result)}`}`;
  }
};

/** The route line of a routed signal. */
const routeLine = (e: {
  tier?: string | undefined;
  routeName?: string | undefined;
  action: Parameters<typeof formatAction>[0] | undefined;
}): string => {
  const by = e.tier === undefined ? 'no route: runner default' : `${e.tier} tier, route "${e.routeName ?? '?'}"`;
  return `   route   ${by} → ${formatAction(e.action)}`;
};

/**
 * The customer's view of a turn's replies, as they stream: one line per crew agent that
 * speaks, opened with its name at its first delta. Parallel members speak at once; a terminal
 * shows one at a time, so a member's text is held until the line before it ends.
 */
class ReplyLines {
  #speaker: string | undefined;
  readonly #held = new Map<string, { text: string; done: boolean }>();
  constructor(readonly out: (text: string) => void) {}

  /** A text delta from `who`. */
  delta(who: string, delta: string): void {
    if (this.#speaker === undefined) this.#open(who, '');
    if (who === this.#speaker) this.out(delta);
    else this.#held.set(who, { text: (this.#held.get(who)?.text ?? '') + delta, done: false });
  }

  /** `who` has finished its reply (its `agent_response`). */
  done(who: string): void {
    const held = this.#held.get(who);
    if (held !== undefined) held.done = true;
    if (who !== this.#speaker) return;
    this.out('"\n');
    this.#speaker = undefined;
    for (const [next, { text, done }] of this.#held) {
      this.#held.delete(next);
      this.#open(next, text);
      if (!done) return;
      this.out('"\n');
      this.#speaker = undefined;
    }
  }

  /** Ends whatever is still open (the turn is over). */
  end(): void {
    while (this.#speaker !== undefined) this.done(this.#speaker);
  }

  #open(who: string, text: string): void {
    this.#speaker = who;
    this.out(`   reply   ${who}: "${text}`);
  }
}

const who = (m: Omit<InboundMessage, 'text'>): string => {
  const peer = m.peer === undefined ? '' : ` · ${m.peer.kind} ${m.peer.id}`;
  const team = m.teamId === undefined ? '' : ` · team ${m.teamId}`;
  return `${m.channel}${team}${peer}`;
};

/** Runs the support desk story and returns the audit log. */
export async function runSupportDesk(options: SupportDeskOptions = {}): Promise<readonly AuditEntry[]> {
  const store = options.store ?? new MemoryCheckpointStore();
  const write = options.write ?? ((line: string) => void process.stdout.write(`${line}\n`));
  const writeDelta =
    options.writeDelta ??
    (options.write === undefined ? (text: string) => void process.stdout.write(text) : linesTo(write));
  const model = deskModel();
  const audit: AuditEntry[] = [];
  const resolver = new RouteResolver(routing);
  const ledger: Refund[] = [];
  const orders = await connectOrders();
  let runner: Runner = createDesk(store, model, (e) => audit.push(e), orders, ledger);
  let events: RunnerEvent[] = [];
  const listen = (r: Runner): void => {
    r.on((e) => events.push(e));
  };
  listen(runner);

  /**
   * Prints what happened since the last print, from the runner's events: all of it for a turn
   * that was not streamed; for a streamed one only the FSM's moves (its stream showed the rest).
   */
  const printEvents = (streamed: boolean): void => {
    // A streamed turn's events end with its outcome; what follows belongs to signals still running.
    const end = streamed ? events.findIndex((e) => e.type === 'outcome') + 1 : events.length;
    for (const e of events.slice(0, end === 0 ? events.length : end)) {
      if (e.type === 'route_decided' && !streamed) write(routeLine(e));
      else if (e.type === 'transition_applied')
        write(`   fsm     ${e.result.from} → ${e.result.to} (${e.result.action})`);
      else if (e.type === 'engine_event' && !streamed) {
        const line = engineLine(e.event);
        if (line !== undefined) write(line);
        if (e.event.type === 'agent_response' && typeof e.event.group === 'string')
          write(`   crew      ${String(e.event.agentId)}: "${String(e.event.content)}"`);
      }
    }
    events = end === 0 ? [] : events.slice(end);
  };

  /**
   * Reads a turn as it streams: the route, the customer's view of each reply as its deltas
   * arrive (with the speaking agent's name; markers are never in it), and the operator's lines
   * for handoffs, tool calls and approvals, in the order they happen. Returns the outcome.
   */
  const follow = async (turn: TurnStream): Promise<Outcome> => {
    const replies = new ReplyLines(writeDelta);
    let spoke = false;
    for await (const e of turn) {
      if (e.type === 'text_delta') {
        spoke = true;
        replies.delta(e.source?.crewAgentId ?? e.source?.stage ?? e.agentId, e.delta);
      } else if (e.type === 'engine_event' && e.event.type === 'agent_response') {
        replies.done(String(e.event.agentId));
      } else if (e.type === 'routed' || e.type === 'engine_event') {
        replies.end();
        const line = e.type === 'routed' ? routeLine(e) : engineLine(e.event);
        if (line !== undefined) write(line);
      }
    }
    replies.end();
    const outcome = await turn.outcome;
    report(outcome, true, spoke);
    return outcome;
  };

  /** Prints the end of one signal's turn: the FSM's moves, the reply unless it streamed, the status. */
  const report = (outcome: Outcome, streamed: boolean, spoke: boolean): void => {
    printEvents(streamed);
    const output = outcome.output as CrewResponse | Envelope | undefined;
    if (spoke) {
      // the reply was shown as it streamed
    } else if (output !== undefined && typeof output === 'object' && 'visibleContent' in output) {
      if (output.visibleContent !== '') write(`   reply   ${output.agentId}: "${output.visibleContent}"`);
    } else if (output !== undefined && typeof output === 'object' && 'trace' in output) {
      write(`   reply   ${outcome.agentId}: "${renderReview(output)}"`);
    }
    const waiting = (outcome.pendingApprovals ?? []).map((p) => p.id);
    const reason =
      outcome.action?.type === 'reject'
        ? ` (${outcome.action.reason})`
        : waiting.length > 0
          ? ` (awaiting approval: ${waiting.join(', ')})`
          : '';
    write(`   = ${outcome.status}${reason}${outcome.error === undefined ? '' : `: ${outcome.error.code}`}`);
  };

  const say = async (message: InboundMessage, note?: string): Promise<Outcome> => {
    const resolved = resolver.resolve(message);
    write('');
    write(`── ${who(message)}: "${message.text}"${note === undefined ? '' : `   (${note})`}`);
    write(
      `   agent   ${resolved.agentId} · session ${formatSessionKey(resolved.sessionKey)} · matched by ${resolved.matchedBy}`,
    );
    return follow(runner.stream(message));
  };

  /** A reviewer (or someone who is not one) decides held tool calls from the CLI channel: `runner.streamApprove`. */
  const approve = async (
    key: string,
    decisions: readonly ApprovalDecision[],
    by: string,
    note: string,
  ): Promise<Outcome> => {
    write('');
    const what = decisions.map((d) => `${d.approved ? 'approves' : 'denies'} ${d.id}`).join(', ');
    write(`── ${who(cli)}: ${by} ${what} of ${key}   (${note})`);
    return follow(runner.streamApprove(key, decisions, { by }));
  };

  /** A turn that starts for session `key` from now on. */
  const turnStarts = (key: string): Promise<void> =>
    new Promise((resolve) => {
      const off = runner.on((e) => {
        if (e.type === 'turn_start' && e.sessionKey === key) {
          off();
          resolve();
        }
      });
    });

  /** `message`, then `followUps` sent while its turn runs: the agent (whenBusy 'collect') answers them in one turn. */
  const sayWhileBusy = async (message: InboundMessage, followUps: readonly string[], note: string): Promise<void> => {
    const resolved = resolver.resolve(message);
    const key = formatSessionKey(resolved.sessionKey);
    write('');
    write(`── ${who(message)}: "${message.text}"   (${note})`);
    write(`   agent   ${resolved.agentId} · session ${key} · matched by ${resolved.matchedBy}`);
    const started = turnStarts(key);
    const first = follow(runner.stream(message));
    await started;
    const more = followUps.map((text) => {
      write(
        `── ${who(message)}: "${text}"   (sent while the crew is answering: the ${resolved.agentId} agent collects)`,
      );
      return runner.handle({ ...message, text });
    });
    await first;
    const merged = await Promise.all(more);
    const output = merged[0]?.output as CrewResponse | undefined;
    write(`── the ${followUps.length} messages sent meanwhile: each routed on its own, answered by one crew run`);
    printEvents(false);
    if (output !== undefined) write(`   reply   ${output.agentId}: "${output.visibleContent}"`);
    for (const [i, o] of merged.entries())
      write(`   = ${o.status} for "${followUps[i] ?? '?'}" (mergedWith ${String(o.mergedWith)})`);
  };

  const alice = { channel: 'telegram', peer: { kind: 'dm' as const, id: '1001' } };
  const aliceOnSlack = { channel: 'slack', teamId: 'T-CUSTOMERS', peer: { kind: 'dm' as const, id: 'U1001' } };
  const vip = { channel: 'telegram', peer: { kind: 'dm' as const, id: '4242' } };
  const carol = { channel: 'telegram', peer: { kind: 'dm' as const, id: '1003' } };
  const reviewer = { channel: 'slack', teamId: 'T-FINANCE', peer: { kind: 'channel' as const, id: 'C-REFUNDS' } };
  const cli = { channel: 'cli' };

  write(
    'Signalyard support desk: telegram, slack and a CLI; routing TOML; an FSM, a crew, a pipeline; rate limit and audit log.',
  );
  const earlier: string[] = [];
  for await (const key of store.list('agent:')) earlier.push(key);
  if (earlier.length > 0) {
    write(`The store already holds ${earlier.length} sessions from an earlier run; they continue where they stopped:`);
    for (const key of earlier) {
      const v = await runner.session(key);
      write(
        `   ${key}: ${v?.history.length ?? 0} messages, checkpoint v${v?.version ?? 0}, ${v?.strategy.type === 'fsm' ? `FSM ${String(v.strategy.current_state)}` : (v?.strategy.type ?? '?')}`,
      );
    }
  }
  const first = await say({ ...alice, text: 'Hi, my invoice charged me twice' }, 'alice, on telegram');
  await say({ ...aliceOnSlack, text: 'yes please' }, 'alice again, now on slack: the identity link joins her sessions');
  await say({ ...alice, text: 'any news?' }, 'the FSM is resolving: user messages are gated');
  await sayWhileBusy(
    { ...vip, text: 'I need help with my account' },
    ["it's about my card", 'the one ending 4417'],
    'a VIP, bound to their own agent',
  );
  await say(
    { ...reviewer, text: 'Review refund R-17 for $250' },
    "the finance team, bound to the review pipeline: another customer's refund, over $100",
  );
  const refundAsked = await say(
    { ...carol, text: 'Please refund order 5531, $420: it arrived broken' },
    'carol: the refund is over $100, so the crew holds it for a reviewer',
  );
  await say({ ...carol, text: 'go ahead, please' }, 'carol cannot approve her own refund by chat');

  write('');
  write('── the runner closes; a new one opens over the same store ──');
  await runner.close();
  runner = createDesk(store, model, (e) => audit.push(e), orders, ledger);
  listen(runner);
  const view = await runner.session(first.sessionKey);
  write(
    `   ${first.sessionKey} continues: FSM ${String(view?.strategy.current_state)}, ${view?.history.length ?? 0} messages, checkpoint v${view?.version ?? 0}`,
  );

  const held = await runner.session(refundAsked.sessionKey);
  write(
    `   ${refundAsked.sessionKey} still waits: ${(held?.pendingApprovals ?? []).map((p) => `${p.id} (${p.toolName} $${String((p.arguments as { amount?: number }).amount)})`).join(', ')}`,
  );
  const heldIds = (held?.pendingApprovals ?? []).map((p) => p.id);
  const approveAll = heldIds.map((id) => ({ id, approved: true }));
  await approve(refundAsked.sessionKey, approveAll, 'dave@support', 'not a reviewer: a route refuses');
  await approve(refundAsked.sessionKey, approveAll, 'rita@finance', 'a reviewer, on the new runner');
  await approve(refundAsked.sessionKey, approveAll, 'rita@finance', 'again: nothing pending, nothing runs');
  write(
    `   refunds carried out: ${ledger.length} — ${ledger.map((r) => `order ${r.order}, $${r.amount} (${r.reference})`).join('; ')}`,
  );
  await say(
    { ...carol, text: 'Thanks! Can you email me the receipt?' },
    'carol again: the conversation continues with billing, no second triage (resume_at: last_agent)',
  );

  write('');
  write(`── timer for ${first.sessionKey}   (alice's $42 refund of the duplicate charge on INV-881 went through)`);
  await follow(runner.streamDispatch(first.sessionKey, signal('timer', { job: 'refund-INV-881' })));
  await say({ ...reviewer, text: 'yes' }, 'the reviewer approves: the paused pipeline resumes');
  await say({ ...cli, text: 'The app crashes on startup' }, 'from the CLI: triage asks two teams at once');
  await say({ ...cli, text: 'hello?' });
  await say({ ...cli, text: 'hello??' });
  await say({ ...cli, text: 'HELLO???' }, 'a fourth message within a minute');
  // What a chat page shows after a reload: alice's conversation, markers hidden, the handoff an entry.
  write('');
  write(`── ${first.sessionKey}, as a chat page shows it after a reload (runner.transcript)`);
  for (const entry of await runner.transcript(first.sessionKey)) write(transcriptLine(entry));
  await runner.close();
  await orders.close();

  const byStatus = new Map<string, number>();
  for (const e of audit) byStatus.set(e.status, (byStatus.get(e.status) ?? 0) + 1);
  write('');
  write(`Audit log: ${audit.length} entries (${[...byStatus].map(([s, n]) => `${n} ${s}`).join(', ')}).`);
  return audit;
}
