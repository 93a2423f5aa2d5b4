// The story the flagship example tells, printed as a readable transcript. `main.ts` runs it;
// the example's test runs it too and checks the transcript's key lines.
import {
  MemoryCheckpointStore,
  formatAction,
  signal,
  type CheckpointStore,
  type PendingApproval,
  type RunnerEvent,
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
} from 'signalyard';
import { createDesk, deskModel, renderReview, routing, type Refund } from './desk.js';

export interface SupportDeskOptions {
  /** Where sessions live; default: a MemoryCheckpointStore kept across the restart. */
  readonly store?: CheckpointStore;
  /** Where the transcript goes; default: stdout. */
  readonly write?: (line: string) => void;
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
  const model = deskModel();
  const audit: AuditEntry[] = [];
  const resolver = new RouteResolver(routing);
  const ledger: Refund[] = [];
  let runner: Runner = createDesk(store, model, (e) => audit.push(e), ledger);
  let events: RunnerEvent[] = [];
  const listen = (r: Runner): void => {
    r.on((e) => events.push(e));
  };
  listen(runner);

  /** Prints what happened since the last print, from the runner's events. */
  const printEvents = (): void => {
    for (const e of events) {
      if (e.type === 'route_decided') {
        const by = e.tier === undefined ? 'no route: runner default' : `${e.tier} tier, route "${e.routeName ?? '?'}"`;
        write(`   route   ${by} → ${formatAction(e.action)}`);
      } else if (e.type === 'transition_applied') {
        write(`   fsm     ${e.result.from} → ${e.result.to} (${e.result.action})`);
      } else if (e.type === 'engine_event') {
        const ev = e.event as Record<string, unknown> & { type: string };
        if (ev.type === 'handoff')
          write(
            `   crew    ${String(ev.from)} → ${String(ev.to)} (${ev.via === 'signal' ? `signal ${String(ev.signal)}` : String(ev.via)})`,
          );
        if (ev.type === 'parallel_start')
          write(`   crew    parallel group ${String(ev.group)}: ${(ev.agents as string[]).join(' + ')}`);
        if (ev.type === 'agent_response' && typeof ev.group === 'string')
          write(`   crew      ${String(ev.agentId)}: "${String(ev.content)}"`);
        if (ev.type === 'interrupt')
          write(`   pipeline interrupt: ${(ev.interrupt as { kind: string }).kind} (paused)`);
        if (ev.type === 'stage_end') write(`   pipeline stage ${String(ev.stage)} → ${String(ev.next)}`);
        if (ev.type === 'approval_requested')
          for (const p of ev.approvals as PendingApproval[])
            write(
              `   approval ${p.id} asked: ${p.agentId} calls ${p.toolName} ${JSON.stringify(p.arguments)} (${p.reason ?? 'needs approval'})`,
            );
        if (ev.type === 'approval_resolved')
          write(`   approval ${String(ev.id)} ${ev.approved === true ? 'approved' : 'denied'}`);
        if (ev.type === 'tool_result' && ev.group === undefined)
          write(`   tool    ${(ev.call as { name: string }).name} → "${String(ev.result)}"`);
      }
    }
    events = [];
  };

  /** Prints what happened to one signal, from the runner's events. */
  const report = (outcome: Outcome): void => {
    printEvents();
    const output = outcome.output as CrewResponse | Envelope | undefined;
    if (
      output !== undefined &&
      typeof output === 'object' &&
      'content' in output &&
      typeof output.content === 'string'
    ) {
      write(`   reply   ${output.agentId}: "${output.content}"`);
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
    const outcome = await runner.handle(message);
    report(outcome);
    return outcome;
  };

  /** A reviewer (or someone who is not one) decides held tool calls from their channel: `runner.approve`. */
  const approve = async (
    key: string,
    decisions: readonly ApprovalDecision[],
    by: string,
    note: string,
  ): Promise<Outcome> => {
    write('');
    const what = decisions.map((d) => `${d.approved ? 'approves' : 'denies'} ${d.id}`).join(', ');
    write(`── ${who(reviewer)}: ${by} ${what} of ${key}   (${note})`);
    const outcome = await runner.approve(key, decisions, { by });
    report(outcome);
    return outcome;
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
    const first = runner.handle(message);
    await started;
    const more = followUps.map((text) => {
      write(
        `── ${who(message)}: "${text}"   (sent while the crew is answering: the ${resolved.agentId} agent collects)`,
      );
      return runner.handle({ ...message, text });
    });
    report(await first);
    const merged = await Promise.all(more);
    const output = merged[0]?.output as CrewResponse | undefined;
    write(`── the ${followUps.length} messages sent meanwhile: each routed on its own, answered by one crew run`);
    printEvents();
    if (output !== undefined) write(`   reply   ${output.agentId}: "${output.content}"`);
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
  await say({ ...reviewer, text: 'Review refund R-17 for $420' }, 'the finance team, bound to the review pipeline');
  const refundAsked = await say(
    { ...carol, text: 'Please refund order 5531, $420: it arrived broken' },
    'carol: the refund is over $100, so the crew holds it for a reviewer',
  );
  await say({ ...carol, text: 'go ahead, please' }, 'carol cannot approve her own refund by chat');

  write('');
  write('── the runner closes; a new one opens over the same store ──');
  await runner.close();
  runner = createDesk(store, model, (e) => audit.push(e), ledger);
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

  write('');
  write(`── timer for ${first.sessionKey}   (the refund job finished)`);
  report(await runner.dispatch(first.sessionKey, signal('timer', { job: 'refund-INV-881' })));
  await say({ ...reviewer, text: 'yes' }, 'the reviewer approves: the paused pipeline resumes');
  await say({ ...cli, text: 'The app crashes on startup' }, 'from the CLI: triage asks two teams at once');
  await say({ ...cli, text: 'hello?' });
  await say({ ...cli, text: 'hello??' });
  await say({ ...cli, text: 'HELLO???' }, 'a fourth message within a minute');
  await runner.close();

  const byStatus = new Map<string, number>();
  for (const e of audit) byStatus.set(e.status, (byStatus.get(e.status) ?? 0) + 1);
  write('');
  write(`Audit log: ${audit.length} entries (${[...byStatus].map(([s, n]) => `${n} ${s}`).join(', ')}).`);
  return audit;
}
