import type { CrewConfig, CrewConfigInput } from '@signalyard/crew';
import { describe, expectTypeOf, it } from 'vitest';
import {
  buildCrewGraph,
  renderCrewMermaid,
  run,
  type CliIo,
  type CliOutput,
  type ExitCode,
  type CrewGraph,
  type CrewGraphEdge,
  type CrewGraphTermination,
} from '@signalyard/cli';

describe('public types', () => {
  it('run takes argv and optional io and resolves with an exit code', () => {
    expectTypeOf(run).parameters.toEqualTypeOf<[argv: readonly string[], io?: CliIo]>();
    expectTypeOf(run).returns.resolves.toEqualTypeOf<ExitCode>();
    expectTypeOf<ExitCode>().toEqualTypeOf<0 | 1 | 2>();
  });

  it('process.stdout and a plain writer are both CliOutput', () => {
    expectTypeOf(process.stdout).toExtend<CliOutput>();
    expectTypeOf({ write: (_: string) => undefined }).toExtend<CliOutput>();
    expectTypeOf<{ stdout: typeof process.stdout; env: NodeJS.ProcessEnv; cwd: string }>().toExtend<CliIo>();
  });

  it('the graph builders take a parsed crew or one written in code', () => {
    expectTypeOf(buildCrewGraph).parameter(0).toEqualTypeOf<CrewConfig | CrewConfigInput>();
    expectTypeOf(buildCrewGraph).returns.toEqualTypeOf<CrewGraph>();
    expectTypeOf(renderCrewMermaid).returns.toEqualTypeOf<string>();
  });

  it('edges and terminations are discriminated by kind', () => {
    expectTypeOf<CrewGraphEdge['kind']>().toEqualTypeOf<'signal' | 'fan_out' | 'next_agent' | 'fallback'>();
    expectTypeOf<Extract<CrewGraphEdge, { kind: 'signal' }>['toKind']>().toEqualTypeOf<'agent' | 'parallel_group'>();
    expectTypeOf<Extract<CrewGraphEdge, { kind: 'fallback' }>['order']>().toEqualTypeOf<number>();
    expectTypeOf<CrewGraphTermination['kind']>().toEqualTypeOf<'signal' | 'terminal_agent'>();
    expectTypeOf<CrewGraph['version']>().toEqualTypeOf<1>();
  });
});
