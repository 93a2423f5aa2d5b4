// The processes inbox.bench.ts starts (not a benchmark itself): its own nats-server with
// JetStream, and the 2 settling worker processes of an inbox (inbox-settler.ts) — with `als`,
// processes that run everything with an AsyncLocalStorage active (env BENCH_ALS=1,
// decisions-wave3 §6).
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const settlerScript = fileURLToPath(new URL('./inbox-settler.ts', import.meta.url));

/** A nats-server started by {@link startServer}. */
export interface Server {
  readonly url: string;
  /** The server's CPU time so far (user + system), in µs. */
  readonly cpuUs: () => number;
  readonly stop: () => void;
}

/** Starts nats-server -js on a random port with a temporary store; undefined when the binary is missing. */
export async function startServer(): Promise<Server | undefined> {
  const port = 20_000 + Math.floor(Math.random() * 20_000);
  const dir = mkdtempSync(join(tmpdir(), 'signalyard-nats-bench-'));
  const child = spawn(
    process.env.NATS_SERVER ?? 'nats-server',
    ['-js', '-a', '127.0.0.1', '-p', String(port), '-sd', dir],
    { stdio: 'ignore' },
  );
  const started = await new Promise<boolean>((resolve) => {
    child.once('error', () => resolve(false));
    setTimeout(() => resolve(child.exitCode === null), 700);
  });
  const stop = (): void => {
    child.kill('SIGTERM');
    rmSync(dir, { recursive: true, force: true });
  };
  if (!started) {
    stop();
    return undefined;
  }
  const cpuUs = (): number => {
    // /proc/<pid>/stat fields 14 and 15 (after the command's closing parenthesis: 12 and 13), in clock ticks of 10 ms
    const fields =
      readFileSync(`/proc/${String(child.pid)}/stat`, 'utf8')
        .split(') ')[1]
        ?.split(' ') ?? [];
    return (Number(fields[11]) + Number(fields[12])) * 10_000;
  };
  return { url: `nats://127.0.0.1:${port}`, cpuUs, stop };
}

/**
 * The 2 worker processes of one inbox, told to run, pause, count and stop over IPC. With `als`,
 * they run everything with an AsyncLocalStorage active (and say so when ready); their worker ids
 * are `w0a` and `w1a` then, `w0` and `w1` otherwise.
 */
export class Settlers {
  readonly #children: ChildProcess[];
  readonly #als: boolean;

  constructor(args: readonly string[], als: boolean) {
    this.#als = als;
    const env = als ? { ...process.env, BENCH_ALS: '1' } : process.env;
    this.#children = ['w0', 'w1'].map((id) =>
      spawn(process.execPath, ['--import', 'tsx', settlerScript, ...args, als ? `${id}a` : id], {
        stdio: ['ignore', 'ignore', 'inherit', 'ipc'],
        env,
      }),
    );
  }

  #next<T>(child: ChildProcess, type: string): Promise<T> {
    return new Promise((resolve, reject) => {
      const onExit = (code: number | null): void => {
        reject(new Error(`a bench worker exited (${String(code)}) before ${type}`));
      };
      const onMessage = (m: unknown): void => {
        if ((m as { type?: string }).type !== type) return;
        child.off('message', onMessage);
        child.off('exit', onExit);
        resolve(m as T);
      };
      child.on('message', onMessage);
      child.once('exit', onExit);
    });
  }

  async #all<T>(request: string, reply: string): Promise<T[]> {
    const replies = this.#children.map((c) => this.#next<T>(c, reply));
    if (request !== '') for (const c of this.#children) c.send({ type: request });
    return Promise.all(replies);
  }

  /** Resolves once both are connected; rejects when one did not start in its mode (with or without its AsyncLocalStorage). */
  ready = async (): Promise<void> => {
    const ready = await this.#all<{ als?: boolean }>('', 'ready');
    if (ready.some((r) => r.als !== this.#als))
      throw new Error(`a bench worker did not start ${this.#als ? 'with' : 'without'} its AsyncLocalStorage`);
  };
  run = (): void => {
    for (const c of this.#children) c.send({ type: 'run' });
  };
  pause = (): Promise<unknown[]> => this.#all('pause', 'paused');
  /** Entries settled by both so far. */
  settled = async (): Promise<number> =>
    (await this.#all<{ settled: number }>('count', 'count')).reduce((sum, c) => sum + c.settled, 0);
  /** Tells both to stop; resolves once both have exited (at once for one that exited already). */
  stop = async (): Promise<void> => {
    const running = this.#children.filter((c) => c.exitCode === null && c.signalCode === null);
    const exits = running.map((c) => new Promise((resolve) => c.once('exit', resolve)));
    for (const c of running)
      if (c.connected) c.send({ type: 'stop' });
      else c.kill();
    await Promise.all(exits);
  };
}
