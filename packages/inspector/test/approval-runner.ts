// A stand-in for a Runner with approvals (Runner.approve is being built elsewhere): one session of
// agent `cashier` holding a pending tool call; `approve` resolves it the way approvals.md says
// the Runner will — an `approval_resolved` engine event, then the outcome — and saves a version.
import type {
  ApprovalDecision,
  ChatMessage,
  Outcome,
  PendingApproval,
  RunnerEvent,
  SessionVersion,
} from '@signalyard/core';
import type { InspectableRunner, InspectedSession } from '../src/index.js';

export const PAYMENTS = 'agent:cashier:main';

export function approvalRunner(): InspectableRunner & {
  decisions: { decisions: readonly ApprovalDecision[]; by?: string }[];
} {
  const listeners = new Set<(e: RunnerEvent) => void>();
  const emit = (e: RunnerEvent): void => {
    for (const l of listeners) l(e);
  };
  let pending: PendingApproval[] = [
    {
      id: 'ap-1',
      toolCallId: 'call-1',
      toolName: 'refund',
      arguments: { order: 4711, amount: 40 },
      agentId: 'cashier',
      reason: 'refunds over 20 need a person',
      requestedAt: new Date(0).toISOString(),
    },
  ];
  const history: ChatMessage[] = [{ role: 'user', content: 'refund order 4711' }];
  const versions: SessionVersion[] = [
    {
      version: 1,
      updatedAt: new Date(0).toISOString(),
      agentId: 'cashier',
      cause: {
        at: new Date(0).toISOString(),
        signal: { kind: 'user_message', text: 'refund order 4711' },
        status: 'paused',
      },
      strategy: { type: 'direct' },
      historyLength: 1,
      pendingApprovals: 1,
    },
  ];
  const view = (): InspectedSession => ({
    sessionKey: PAYMENTS,
    agentId: 'cashier',
    version: versions[0]!.version,
    strategy: { type: 'direct' },
    history,
    pendingApprovals: pending,
    busy: false,
    queued: 0,
  });
  const decisions: { decisions: readonly ApprovalDecision[]; by?: string }[] = [];
  return {
    decisions,
    on(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    async *listSessions() {
      yield {
        sessionKey: PAYMENTS,
        agentId: 'cashier',
        version: versions[0]!.version,
        updatedAt: versions[0]!.updatedAt,
      };
    },
    session: (key) => Promise.resolve(key === PAYMENTS ? view() : undefined),
    sessionAt: (key, version) =>
      Promise.resolve(key === PAYMENTS && version === versions[0]!.version ? view() : undefined),
    async *history(key) {
      if (key === PAYMENTS) yield* versions;
    },
    approve(sessionKey, given, opts) {
      decisions.push({ decisions: given, ...(opts?.by !== undefined && { by: opts.by }) });
      const signal = { kind: 'tool_approval' as const, payload: { decisions: given, by: opts?.by } };
      emit({ type: 'signal_received', sessionKey, agentId: 'cashier', signal });
      emit({ type: 'route_decided', sessionKey, agentId: 'cashier', signal, action: { type: 'continue' } });
      for (const d of given) {
        emit({
          type: 'engine_event',
          sessionKey,
          agentId: 'cashier',
          event: {
            type: 'approval_resolved',
            agentId: 'cashier',
            id: d.id,
            approved: d.approved,
            ...(d.reason !== undefined && { reason: d.reason }),
          },
        });
      }
      pending = pending.filter((p) => !given.some((d) => d.id === p.id));
      history.push({
        role: 'assistant' as const,
        content: given[0]?.approved === true ? 'Refunded 40.' : 'Refund not made.',
      });
      versions.unshift({
        ...versions[0]!,
        version: versions[0]!.version + 1,
        cause: {
          at: new Date().toISOString(),
          signal: { kind: 'tool_approval' },
          status: 'completed',
          approvals: given.map((d) => ({
            id: d.id,
            approved: d.approved,
            ...(opts?.by !== undefined && { by: opts.by }),
          })),
        },
        pendingApprovals: pending.length,
        historyLength: history.length,
      });
      const outcome: Outcome = {
        sessionKey,
        agentId: 'cashier',
        action: { type: 'continue' },
        decidedBy: undefined,
        status: 'completed',
      };
      const event: RunnerEvent = { type: 'outcome', outcome };
      emit(Object.defineProperty(event, 'signal', { value: signal, enumerable: false }));
      return Promise.resolve(outcome);
    },
  };
}
