import { describe, expect, it } from 'vitest';
import { ConfigError, SignalyardError, isSignalyardError } from '@signalyard/core';
import {
  PipelineBoundError,
  PipelineConfigError,
  PipelineStageError,
  PipelineStateError,
  PipelineUsageError,
} from '@signalyard/pipeline';

class AppConfigError extends PipelineConfigError {}
class AppStateError extends PipelineStateError {}
class AppUsageError extends PipelineUsageError {}
class AppBoundError extends PipelineBoundError {}
class AppStageError extends PipelineStageError {}

interface Row {
  readonly name: string;
  readonly code: string;
  readonly isInstance: (e: unknown) => boolean;
  readonly make: () => SignalyardError;
  readonly makeSub: () => SignalyardError;
}

const problem = { path: 'stages[0].name', message: 'expected a non-empty string' };
const rows: readonly Row[] = [
  {
    name: 'PipelineConfigError',
    code: 'CONFIG_INVALID',
    isInstance: (e) => PipelineConfigError.isInstance(e),
    make: () => new PipelineConfigError({ problems: [problem] }),
    makeSub: () => new AppConfigError({ problems: [problem], pipeline: 'p' }),
  },
  {
    name: 'PipelineStateError',
    code: 'NO_PENDING_INTERRUPT',
    isInstance: (e) => PipelineStateError.isInstance(e),
    make: () => new PipelineStateError({ code: 'NO_PENDING_INTERRUPT', message: 'm', envelopeId: 'e' }),
    makeSub: () => new AppStateError({ code: 'NO_PENDING_INTERRUPT', message: 'm', envelopeId: 'e' }),
  },
  {
    name: 'PipelineUsageError',
    code: 'PIPELINE_ARGUMENT_INVALID',
    isInstance: (e) => PipelineUsageError.isInstance(e),
    make: () => new PipelineUsageError({ code: 'PIPELINE_ARGUMENT_INVALID', argument: 'opts', message: 'm' }),
    makeSub: () => new AppUsageError({ code: 'PIPELINE_ARGUMENT_INVALID', argument: 'opts', message: 'm' }),
  },
  {
    name: 'PipelineBoundError',
    code: 'PIPELINE_BOUND_EXCEEDED',
    isInstance: (e) => PipelineBoundError.isInstance(e),
    make: () => new PipelineBoundError({ bound: 'maxLlmCalls', limit: 3, stage: 's' }),
    makeSub: () => new AppBoundError({ bound: 'maxToolCalls', limit: 3, stage: 's' }),
  },
  {
    name: 'PipelineStageError',
    code: 'PIPELINE_STAGE_TIMEOUT',
    isInstance: (e) => PipelineStageError.isInstance(e),
    make: () => new PipelineStageError({ code: 'PIPELINE_STAGE_TIMEOUT', stage: 's', message: 'm' }),
    makeSub: () => new AppStageError({ code: 'PIPELINE_STAGE_TIMEOUT', stage: 's', message: 'm' }),
  },
];

const foreign: readonly [string, unknown][] = [
  ['a plain Error', new Error('x')],
  ['a SignalyardError', new SignalyardError({ code: 'CONFIG_INVALID', message: 'x' })],
  ['a core ConfigError', new ConfigError({ problems: [problem] })],
  ['a look-alike object', { code: 'NO_PENDING_INTERRUPT', name: 'PipelineStateError' }],
  ['null', null],
  ['a string', 'PipelineUsageError'],
];

describe.each(rows)('$name', (row) => {
  it('is a SignalyardError with its code and name', () => {
    const error = row.make();
    expect(isSignalyardError(error, row.code)).toBe(true);
    expect(error).toBeInstanceOf(Error);
    expect(error.name).toBe(row.name);
  });

  it('isInstance matches its own instances and subclasses', () => {
    expect(row.isInstance(row.make())).toBe(true);
    expect(row.isInstance(row.makeSub())).toBe(true);
  });

  it('isInstance matches no other error class', () => {
    for (const other of rows) {
      if (other === row) continue;
      expect(row.isInstance(other.make()), other.name).toBe(false);
      expect(row.isInstance(other.makeSub()), other.name).toBe(false);
    }
    for (const [what, value] of foreign) expect(row.isInstance(value), what).toBe(false);
  });
});

describe('error details', () => {
  it('PipelineConfigError is a ConfigError naming its pipeline', () => {
    const e = new PipelineConfigError({ problems: [problem], pipeline: 'review' });
    expect(ConfigError.isInstance(e)).toBe(true);
    expect(e.pipeline).toBe('review');
    expect(e.message).toContain('Invalid pipeline "review"');
    expect(new PipelineConfigError({ problems: [problem] }).pipeline).toBeUndefined();
  });

  it('PipelineBoundError names the call, the bound and the stage', () => {
    expect(new PipelineBoundError({ bound: 'maxToolCalls', limit: 2, stage: 'search' }).message).toBe(
      'Stage "search": tool call refused, it would exceed maxToolCalls 2',
    );
  });

  it('PipelineStateError keeps its details', () => {
    const e = new PipelineStateError({
      code: 'INTERRUPT_EXPIRED',
      message: 'm',
      envelopeId: 'e',
      interruptId: 'i',
      expiresAt: 't',
    });
    expect(e).toMatchObject({ code: 'INTERRUPT_EXPIRED', envelopeId: 'e', interruptId: 'i', expiresAt: 't' });
  });

  it('PipelineStageError keeps its cause', () => {
    const cause = new Error('root');
    expect(new PipelineStageError({ code: 'PIPELINE_ROUTING_FAILED', stage: 's', message: 'm', cause }).cause).toBe(
      cause,
    );
  });
});
