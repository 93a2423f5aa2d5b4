// Running the steps of `pnpm pack:public` and `pnpm release:rehearse`: each step is named when it
// starts, and a failing one stops the run with exit 1, naming the step.
import { spawnSync } from 'node:child_process';

let current = 'setup';

/** Runs `fn` as the step `name` (printed first). */
export function step(name, fn) {
  current = name;
  console.log(`\n::: ${name}`);
  return fn();
}

/** Same, for an async `fn`. */
export async function stepAsync(name, fn) {
  current = name;
  console.log(`\n::: ${name}`);
  return await fn();
}

/** The step running now (the one a failure is reported against). */
export function currentStep() {
  return current;
}

/**
 * Runs a command; throws unless it exits with `expectStatus` (0). `quiet` captures its output
 * (returned as `stdout`, `stderr`); otherwise it goes to the terminal.
 */
export function run(command, argv, { cwd, quiet = false, expectStatus = 0, env = {} }) {
  const r = spawnSync(command, argv, {
    cwd,
    encoding: 'utf8',
    stdio: quiet ? ['ignore', 'pipe', 'pipe'] : ['ignore', 'inherit', 'inherit'],
    env: { ...process.env, NO_COLOR: '1', ...env },
  });
  if (r.error) throw r.error;
  if (r.status !== expectStatus) {
    const output = quiet ? `\n${r.stdout}${r.stderr}` : '';
    throw new Error(
      `${command} ${argv.join(' ')} exited with ${r.status ?? r.signal} (expected ${expectStatus})${output}`,
    );
  }
  return r;
}

/** npm, without its audit and funding chatter. */
export function npm(argv, cwd, opts = {}) {
  return run('npm', [...argv, '--no-audit', '--no-fund', '--loglevel=error'], { cwd, ...opts });
}
