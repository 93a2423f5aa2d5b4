import type { Envelope } from '../envelope/envelope.js';
import type { ProcessRecord } from './process-record.js';
import type { ProcessStatus } from './process-status.js';
import { remainingQuota } from './quotas.js';

/** A snapshot of `p` at `now` (the kernel's clock): usage live while it runs. @internal */
export function processStatus(p: ProcessRecord, now: number): ProcessStatus {
  const counters = p.run?.live ?? p.envelope;
  const elapsedMs = p.usage.elapsedMs + (p.run === undefined ? 0 : elapsedBetween(p.run.startedAt, now));
  const usage = {
    llmCalls: counters?.llmCalls ?? 0,
    toolCalls: p.usage.toolCalls.used,
    agentHops: counters?.agentHops ?? 0,
    iterations: counters?.iteration ?? 0,
    elapsedMs,
  };
  const status: ProcessStatus = {
    pid: p.pid,
    state: p.state,
    priority: p.request.priority,
    service: p.request.serviceName,
    usage,
    remaining: remainingQuota(p.request.quota, usage),
  };
  if (p.state === 'waiting') status.interrupt = (p.envelope as Envelope).interrupt;
  return status;
}

/** `now - since` in ms, never negative (a clock set back), 0 when either reading is missing. @internal */
export function elapsedBetween(since: number, now: number): number {
  const ms = now - since;
  return ms > 0 ? ms : 0; // NaN is not > 0
}
