import type { Envelope } from '../envelope/envelope.js';
import type { ProcessRecord } from './process-record.js';
import type { ProcessStatus } from './process-status.js';
import { remainingQuota } from './quotas.js';

/** A snapshot of `p` at `now` (`Date.now()`): usage live while it runs. @internal */
export function processStatus(p: ProcessRecord, now: number): ProcessStatus {
  const counters = p.run?.live ?? p.envelope;
  const elapsedMs = p.usage.elapsedMs + (p.run === undefined ? 0 : now - p.run.startedAt);
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
