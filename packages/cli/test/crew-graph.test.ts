import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import * as crew from '@signalyard/crew';
import { describe, expect, it } from 'vitest';
import { buildCrewGraph, renderCrewMermaid } from '@signalyard/cli';
import { EXAM_GRAPH, EXAM_MERMAID, FIXTURES } from './support.js';

// The graph itself is `@signalyard/crew`'s (tested there); the CLI re-exports `buildCrewGraph`
// and draws a crew in one call with `renderCrewMermaid`.

const exam = crew.parseCrewConfig(readFileSync(join(FIXTURES, 'exam-crew.yaml'), 'utf8'));

describe('buildCrewGraph', () => {
  it("is @signalyard/crew's, re-exported", () => {
    expect(buildCrewGraph).toBe(crew.buildCrewGraph);
  });

  it('the exam crew: agents, the parallel group, signal, fan-out, next_agent and fallback edges, terminations', () => {
    expect(buildCrewGraph(exam)).toEqual(EXAM_GRAPH);
  });
});

describe('renderCrewMermaid', () => {
  it('the exam crew, exactly', () => {
    expect(renderCrewMermaid(exam)).toBe(EXAM_MERMAID);
  });

  it('draws what crewGraphMermaid draws of the crew’s graph; an invalid crew is a ConfigError', () => {
    expect(renderCrewMermaid(exam)).toBe(crew.crewGraphMermaid(crew.buildCrewGraph(exam)));
    expect(() => renderCrewMermaid({ entryPoint: 'nobody', agents: [{ id: 'a' }] })).toThrow(
      expect.objectContaining({ code: 'CONFIG_INVALID' }) as Error,
    );
  });
});
