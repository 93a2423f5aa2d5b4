// Where inbox.bench.ts's time goes (not a benchmark itself): the CPU each side of a round spent —
// the child processes (their own report), the bench's process (the producer), the server
// processes serving each role (found by application_name, read from /proc/<pid>/stat), the
// machine's idle share (/proc/stat) — and the workers' round trips by statement.
import type { ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import type { Pool } from 'pg';

/** Ticks per second of /proc/<pid>/stat's utime and stime (USER_HZ, 100 on Linux). */
const TICKS = 100;

/** A runner process of bench/inbox-runner.ts, and its messages. */
export interface Child {
  readonly process: ChildProcess;
  next(type: string): Promise<Record<string, unknown>>;
  stop(): Promise<void>;
}

/** Round trips by statement label, counted client side. */
export type Trips = Record<string, { calls: number; ms: number }>;

/** CPU ms spent over the measured rounds of one mode: the runners' processes and the server's processes serving them. */
export interface Spent {
  inboxNode: number;
  inboxProducer: number;
  inboxServer: number;
  /** Of `inboxServer`: the server processes serving the producer's accepts. */
  inboxAcceptServer: number;
  /** Of `inboxServer`: the server processes serving the workers' checkpoint store (their saves and loads). */
  inboxSaveServer: number;
  inboxBusy: number;
  inboxIdle: number;
  plainNode: number;
  plainServer: number;
  /** The machine's idle ticks and all its ticks during the inbox rounds, and during the rounds without. */
  readonly inboxMachine: { idle: number; all: number };
  readonly plainMachine: { idle: number; all: number };
}

export function newSpent(): Spent {
  return {
    inboxNode: 0,
    inboxProducer: 0,
    inboxServer: 0,
    inboxAcceptServer: 0,
    inboxSaveServer: 0,
    inboxBusy: 0,
    inboxIdle: 0,
    plainNode: 0,
    plainServer: 0,
    inboxMachine: { idle: 0, all: 0 },
    plainMachine: { idle: 0, all: 0 },
  };
}

/** The machine's CPU ticks so far (every core): idle (with I/O wait) and in all, from /proc/stat. */
function machineTicks(): { idle: number; all: number } {
  try {
    const fields = (readFileSync('/proc/stat', 'utf8').split('\n')[0] ?? '')
      .trim()
      .split(/\s+/)
      .slice(1, 9)
      .map(Number);
    return { idle: (fields[3] ?? 0) + (fields[4] ?? 0), all: fields.reduce((n, t) => n + t, 0) };
  } catch {
    return { idle: 0, all: 0 }; // not Linux
  }
}

/** CPU ms the server processes of a role spent between two readings (new processes: all of theirs). */
function serverCpuSpent(before: Map<number, number>, after: Map<number, number>): number {
  let ms = 0;
  for (const [pid, now] of after) ms += now - (before.get(pid) ?? 0);
  return ms;
}

/** Asks each child for its report ('trips': its round trips, CPU ms and event-loop use so far). */
async function reports(children: readonly Child[]): Promise<Record<string, unknown>[]> {
  return Promise.all(
    children.map((w) => {
      const reply = w.next('trips');
      w.process.send('trips');
      return reply;
    }),
  );
}

/** CPU ms (and event-loop busy ms) the child processes spent so far, summed. */
async function childCpu(children: readonly Child[]): Promise<{ cpu: number; busy: number; idle: number }> {
  let cpu = 0;
  let busy = 0;
  let idle = 0;
  for (const r of await reports(children)) {
    cpu += r.cpuMs as number;
    const elu = r.elu as { active: number; idle: number };
    busy += elu.active;
    idle += elu.idle;
  }
  return { cpu, busy, idle };
}

/** Measures rounds' CPU against the server at `admin`, whose bench connections are named `sybench_<tag>_<role>`. */
export class CostMeter {
  readonly #admin: Pool;
  readonly #tag: string;

  constructor(admin: Pool, tag: string) {
    this.#admin = admin;
    this.#tag = tag;
  }

  /** CPU ms so far of the server processes serving `role` (by application_name), by pid. */
  async #serverCpu(role: string): Promise<Map<number, number>> {
    const rows = await this.#admin.query<{ pid: number }>(
      'SELECT pid FROM pg_stat_activity WHERE application_name = $1',
      [`sybench_${this.#tag}_${role}`],
    );
    const cpu = new Map<number, number>();
    for (const { pid } of rows.rows) {
      try {
        const fields =
          readFileSync(`/proc/${String(pid)}/stat`, 'utf8')
            .split(') ')[1]
            ?.split(' ') ?? [];
        cpu.set(pid, ((Number(fields[11]) + Number(fields[12])) * 1000) / TICKS);
      } catch {
        // gone, or the server is not on this machine
      }
    }
    return cpu;
  }

  /**
   * Runs `round` and adds the CPU it cost to `spent`. `roles`: for 'inbox', the workers' inbox
   * connections, the producer's, the workers' store connections (inbox-runner.ts names them
   * `<role>_store`); for 'plain', the runners' and their stores'.
   */
  async costed<T>(
    spent: Spent,
    kind: 'inbox' | 'plain',
    children: readonly Child[],
    roles: readonly string[],
    round: () => Promise<T>,
  ): Promise<T> {
    const server0 = await Promise.all(roles.map((r) => this.#serverCpu(r)));
    const node0 = await childCpu(children);
    const self0 = process.cpuUsage();
    const ticks0 = machineTicks();
    const result = await round();
    const ticks = machineTicks();
    const self = process.cpuUsage(self0);
    const machine = kind === 'inbox' ? spent.inboxMachine : spent.plainMachine;
    machine.idle += ticks.idle - ticks0.idle;
    machine.all += ticks.all - ticks0.all;
    const node = await childCpu(children);
    const server = await Promise.all(roles.map((r) => this.#serverCpu(r)));
    const byRole = server.map((after, i) => serverCpuSpent(server0[i] as Map<number, number>, after));
    const serverMs = byRole.reduce((n, ms) => n + ms, 0);
    if (kind === 'inbox') {
      spent.inboxAcceptServer += byRole[1] ?? 0;
      spent.inboxSaveServer += byRole[2] ?? 0;
      spent.inboxNode += node.cpu - node0.cpu;
      spent.inboxProducer += (self.user + self.system) / 1000;
      spent.inboxServer += serverMs;
      spent.inboxBusy += node.busy - node0.busy;
      spent.inboxIdle += node.idle - node0.idle;
    } else {
      spent.plainNode += node.cpu - node0.cpu;
      spent.plainServer += serverMs;
    }
    return result;
  }
}

/**
 * Prints where the CPU of `signals` settled signals went, and what it allows: the rounds are
 * CPU-bound (the workers, the producer and the server share the machine's cores), so the rate
 * with the inbox over the rate without is at most the CPU per signal without over the CPU per
 * signal with — and accepting alone (the producer and its server processes) puts a ceiling on it
 * even if settling cost no more than the turn without an inbox.
 */
export function printCosts(spent: Spent, signals: number): void {
  const per = (ms: number): string => ((ms / signals) * 1000).toFixed(0);
  const busy = (100 * spent.inboxBusy) / (spent.inboxBusy + spent.inboxIdle);
  console.log(
    `  CPU per signal (µs): inbox — workers ${per(spent.inboxNode)} (event loop busy ${busy.toFixed(0)} %), ` +
      `producer process ${per(spent.inboxProducer)}, server processes ${per(spent.inboxServer)}; ` +
      `no inbox — runners ${per(spent.plainNode)}, server processes ${per(spent.plainServer)}`,
  );
  const accepting = spent.inboxProducer + spent.inboxAcceptServer;
  const settling = spent.inboxNode + spent.inboxServer - spent.inboxAcceptServer;
  const plainMs = spent.plainNode + spent.plainServer;
  const ratio = (ms: number): string => (plainMs / ms).toFixed(2);
  console.log(
    `  accepting ${per(accepting)} µs (producer ${per(spent.inboxProducer)} + its server processes ${per(spent.inboxAcceptServer)}), ` +
      `settling ${per(settling)} µs (workers ${per(spent.inboxNode)} + the server processes of their inbox statements ` +
      `${per(spent.inboxServer - spent.inboxAcceptServer - spent.inboxSaveServer)} and of their saves ${per(spent.inboxSaveServer)}), ` +
      `a signal without the inbox ${per(plainMs)} µs in all: ` +
      `with the same cores, the ratio is at most ${ratio(accepting + settling)}x as spent, ` +
      `and ${ratio(accepting + plainMs)}x if settling cost only the turn without the inbox`,
  );
  const idle = ({ idle, all }: { idle: number; all: number }): string =>
    all > 0 ? ((100 * idle) / all).toFixed(0) : '?';
  console.log(
    `  the machine's cores idle during the rounds: ${idle(spent.inboxMachine)} % with the inbox, ${idle(spent.plainMachine)} % without`,
  );
}

/** The workers' round trips so far, summed by statement. */
export async function tripsOf(workers: readonly Child[]): Promise<Trips> {
  const sum: Trips = {};
  for (const reply of await reports(workers))
    for (const [k, v] of Object.entries(reply.trips as Trips)) {
      const t = (sum[k] ??= { calls: 0, ms: 0 });
      t.calls += v.calls;
      t.ms += v.ms;
    }
  return sum;
}

/** The round trips between two {@link tripsOf} readings. */
export function minus(after: Trips, before: Trips): Trips {
  return Object.fromEntries(
    Object.entries(after).map(([k, v]) => [
      k,
      { calls: v.calls - (before[k]?.calls ?? 0), ms: v.ms - (before[k]?.ms ?? 0) },
    ]),
  );
}

/** Prints the workers' round trips per settled entry by statement, dearest first. */
export function printTrips(all: Trips, settled: number): void {
  console.log(
    "  where the time goes: the 2 workers' round trips per settled entry (client side, the measured rounds):",
  );
  const rows = Object.entries(all)
    .filter(([, t]) => t.calls > 0)
    .sort(([, a], [, b]) => b.ms - a.ms);
  for (const [label, t] of rows.slice(0, 14))
    console.log(
      `    ${(t.calls / settled).toFixed(2).padStart(6)} trips ${((t.ms / settled) * 1000).toFixed(0).padStart(7)} µs  ${label}`,
    );
  const calls = rows.reduce((n, [, t]) => n + t.calls, 0);
  console.log(`    in all ${(calls / settled).toFixed(2)} round trips per settled entry`);
}
