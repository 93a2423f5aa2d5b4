// `signalyard validate` on a valid routing file whose bindings cannot all win: warnings with
// their lines, exit 0; `--strict` makes them problems, exit 1; config errors stay errors.
import { describe, expect, it } from 'vitest';
import {
  INVALID_ROUTING_PROBLEMS,
  PROBLEM_LINE,
  SHADOWED_ROUTING_SUMMARY,
  SHADOWED_ROUTING_WARNINGS,
  lines,
  runInProcess as cli,
} from './support.js';

describe('validate: binding lint', () => {
  it('prints each binding that can never win as a warning with its line, then the summary, exit 0', async () => {
    const result = await cli(['validate', 'routing-shadowed.toml']);
    expect(result).toEqual({
      code: 0,
      stdout: [...SHADOWED_ROUTING_WARNINGS, SHADOWED_ROUTING_SUMMARY].map((l) => `${l}\n`).join(''),
      stderr: '',
    });
    for (const line of SHADOWED_ROUTING_WARNINGS) expect(line).toMatch(PROBLEM_LINE);
  });

  it('--strict: the warnings are problems (file:line: path: message), no summary, exit 1', async () => {
    const result = await cli(['validate', 'routing-shadowed.toml', '--strict']);
    expect(result.code).toBe(1);
    expect(result.stderr).toBe('');
    expect(lines(result.stdout)).toEqual(SHADOWED_ROUTING_WARNINGS.map((w) => w.replace(': warning: ', ': ')));
  });

  it('a clean routing file prints no warnings, with or without --strict', async () => {
    const summary =
      'routing.toml: valid routing config: 2 bindings, 1 identity link, default agent "main", dm_scope "per-peer"\n';
    expect(await cli(['validate', 'routing.toml'])).toEqual({ code: 0, stdout: summary, stderr: '' });
    expect(await cli(['validate', 'routing.toml', '--strict'])).toEqual({ code: 0, stdout: summary, stderr: '' });
  });

  it('config errors stay errors: the problems, exit 1, with or without --strict', async () => {
    for (const args of [[], ['--strict']]) {
      const result = await cli(['validate', 'invalid-routing.toml', ...args]);
      expect(result.code).toBe(1);
      expect(lines(result.stdout)).toEqual(INVALID_ROUTING_PROBLEMS);
    }
  });

  it('--strict changes nothing for a crew', async () => {
    const result = await cli(['validate', 'exam-crew.yaml', '--strict']);
    expect(result.code).toBe(0);
    expect(result.stdout).toContain('valid crew');
  });

  it('on a terminal, "warning:" is yellow; never on a pipe', async () => {
    const tty = await cli(['validate', 'routing-shadowed.toml'], { tty: true });
    expect(lines(tty.stdout)[0]).toBe(
      '\u001b[1mrouting-shadowed.toml:17\u001b[22m: \u001b[36mrouting.bindings[2]\u001b[39m: \u001b[33mwarning:\u001b[39m this binding can never win: bindings[1] comes first at the same tier (peer) and matches every message this one matches (it does not require an account)',
    );
    expect(lines((await cli(['validate', 'routing-shadowed.toml'], { env: { FORCE_COLOR: '1' } })).stdout)).toEqual([
      ...SHADOWED_ROUTING_WARNINGS,
      SHADOWED_ROUTING_SUMMARY,
    ]);
  });

  it('--help documents --strict', async () => {
    expect((await cli(['validate', '--help'])).stdout).toContain('--strict');
  });
});
