import type { Envelope } from '../envelope/envelope.js';
import type { PipelineMode } from '../envelope/envelope-json.js';
import type { InterruptResponse } from '../envelope/interrupt.js';
import type { RunState } from '../runtime/run-state.js';
import type { RunBounds } from '../runtime/runtime-options.js';
import type { Priority } from './priority.js';
import { priorityRank } from './priority.js';
import type { ProcessState } from './process-state.js';
import type { ResourceQuota } from './resource-quota.js';
import type { Service } from './service-registry.js';

/** What was submitted: fixed for the process's whole life. @internal */
export interface ProcessRequest {
  readonly input: unknown;
  readonly mode: PipelineMode;
  /** The service named (or defaulted to); `''` when none was named and none is registered. */
  readonly serviceName: string;
  /** That service, when it is registered. */
  readonly service: Service<ProcessRecord> | undefined;
  readonly priority: Priority;
  readonly quota: Readonly<ResourceQuota>;
  /** The quota's bounds as the runtime takes them (`undefined` when the quota sets none). */
  readonly bounds: RunBounds | undefined;
}

/** The run in progress while the process is `running`. @internal */
export interface RunningSegment {
  readonly controller: AbortController;
  /** When it started, on the kernel's clock (`NaN` when the clock could not be read). */
  readonly startedAt: number;
  /** The run's live state (for `status` while it runs). */
  live: Readonly<RunState> | undefined;
}

/** Callbacks and timers tied to the process's life. @internal */
interface ProcessHooks {
  /** Resolves the pending `result`, if one is pending. */
  settle: ((envelope: Envelope) => void) | undefined;
  /** Unlinks the `abortSignal` given to `submit`. */
  unlinkAbort: (() => void) | undefined;
  /** Cancels the timer that forgets a terminated process. */
  cancelForget: (() => void) | undefined;
}

/** One process in the kernel's process table. @internal */
export interface ProcessRecord {
  readonly pid: string;
  readonly request: ProcessRequest;
  /** Its place in the queues: priority rank, and a sequence number set each time it is queued (FIFO). */
  readonly order: { readonly rank: number; seq: number };
  state: ProcessState;
  /** The envelope as of the last pause or termination: what `resume` continues. */
  envelope: Envelope | undefined;
  /** The answer `resume` gave, until the run continues with it. */
  response: InterruptResponse | undefined;
  run: RunningSegment | undefined;
  /** What it has used outside its envelope's counters, across runs. */
  readonly usage: { readonly toolCalls: { used: number }; elapsedMs: number };
  readonly hooks: ProcessHooks;
}

/** A new process (state `new`). @internal */
export function newProcessRecord(pid: string, request: ProcessRequest): ProcessRecord {
  return {
    pid,
    request,
    order: { rank: priorityRank(request.priority), seq: 0 },
    state: 'new',
    envelope: undefined,
    response: undefined,
    run: undefined,
    usage: { toolCalls: { used: 0 }, elapsedMs: 0 },
    hooks: { settle: undefined, unlinkAbort: undefined, cancelForget: undefined },
  };
}
