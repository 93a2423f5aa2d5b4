// A cyclic review loop (stage_a -> stage_b -> stage_c, where stage_c routes
// `verdict = loop_back` back to stage_a and `verdict = proceed` onwards), as a small writing
// pipeline: plan -> draft -> review -> publish. The planner asks a clarification question when
// the request names no audience; the run pauses, is stored as JSON, and is resumed with the answer.
// A second run has a reviewer that is never satisfied, and the edge limit ends it.
import { definePipeline, Envelope, PipelineRuntime, type PipelineEvent, type StageConfig } from '@signalyard/pipeline';

interface Plan {
  topic: string;
  audience: string;
}
interface Draft {
  text: string;
  revision: number;
}

/** plan: works out topic and audience; without an audience it asks (routes to `clarification`). */
const plan: StageConfig = {
  name: 'plan',
  run: (ctx) => {
    const topic = String(ctx.input);
    const audience = ctx.response?.text ?? (ctx.outputs.plan as Plan | undefined)?.audience;
    if (audience === undefined) return { needs: 'clarification', question: `Who is "${topic}" for?` };
    const review = ctx.outputs.review as { notes?: string } | undefined;
    return { topic, audience, focus: review?.notes ?? 'the essentials' };
  },
  routingRules: [{ condition: 'needs', value: 'clarification', target: 'clarification' }],
  defaultNext: 'draft',
};

/** draft: writes a draft from the plan; each loop makes a longer revision. */
const draft: StageConfig = {
  name: 'draft',
  run: (ctx) => {
    const p = ctx.outputs.plan as Plan & { focus: string };
    const revision = ((ctx.outputs.draft as Draft | undefined)?.revision ?? 0) + 1;
    const text =
      revision === 1
        ? `${p.topic}: it is out.`
        : `${p.topic}, for ${p.audience}: what changed, why it matters, and how to upgrade (focus: ${p.focus}).`;
    return { text, revision };
  },
  defaultNext: 'review',
};

/** review (stage_c): `proceed` when the draft is substantial enough, else `loop_back` with notes. */
function reviewer(minLength: number): StageConfig {
  return {
    name: 'review',
    run: (ctx) => {
      const d = ctx.outputs.draft as Draft;
      return d.text.length >= minLength
        ? { verdict: 'proceed' }
        : { verdict: 'loop_back', notes: `say more than ${d.text.length} characters` };
    },
    routingRules: [
      { condition: 'verdict', value: 'proceed', target: 'publish' },
      { condition: 'verdict', value: 'loop_back', target: 'plan' },
    ],
    defaultNext: 'end',
  };
}

const publish: StageConfig = {
  name: 'publish',
  run: (ctx) => ({ published: (ctx.outputs.draft as Draft).text }),
};

function pipelineWith(minLength: number) {
  return definePipeline({
    name: 'review-loop',
    stages: [plan, draft, reviewer(minLength), publish],
    maxIterations: 5,
    edgeLimits: [{ from: 'review', to: 'plan', maxCount: 2 }],
  });
}

/** Prints a stream's events as a transcript and returns the final envelope. */
async function show(events: AsyncIterable<PipelineEvent>): Promise<Envelope> {
  for await (const event of events) {
    switch (event.type) {
      case 'stage_end': {
        const detail = Object.entries(event.output)
          .map(([k, v]) => `${k}=${JSON.stringify(v)}`)
          .join(' ');
        console.log(`  ${event.stage.padEnd(8)} -> ${event.next.padEnd(14)} ${detail}`);
        break;
      }
      case 'interrupt':
        console.log(`  || paused: ${event.interrupt.kind} raised by "${event.interrupt.stage}"`);
        break;
      case 'warning':
        console.log(`  ! ${event.message}`);
        break;
      case 'end':
        return event.envelope;
      case 'stage_start':
        break;
    }
  }
  throw new Error('the stream ended without an end event');
}

function summary(env: Envelope): string {
  const how = env.terminated
    ? `${env.terminalReason ?? '?'}${env.terminationReason === undefined ? '' : ` (${env.terminationReason})`}`
    : 'paused';
  return `${how}: ${env.agentHops} stages, ${env.iteration} loop-back(s), edges ${JSON.stringify(env.edgeTraversals)}`;
}

// ---- Run 1: a clarification, answered on resume, then the review loop converges.
const runtime = new PipelineRuntime(pipelineWith(60));
console.log('Run 1: "Release notes for v2" (no audience given)');
const paused = await show(runtime.stream('Release notes for v2'));
console.log(`  ${summary(paused)}`);
const question = (paused.interrupt?.payload as { question?: string } | undefined)?.question ?? '?';
const answer = 'developers upgrading from v1';
console.log(`  Q: ${question}\n  A: ${answer}`);

// The paused run survives a trip through storage: resume works on the envelope rebuilt from JSON.
const stored = JSON.stringify(paused);
console.log(`  (stored ${stored.length} bytes of envelope JSON; resuming from it)`);
console.log('Resume:');
const done = await show(runtime.resumeStream(Envelope.fromJSON(JSON.parse(stored)), { text: answer }));
console.log(`  ${summary(done)}`);
console.log(`  published: ${JSON.stringify((done.outputs.publish as { published: string }).published)}`);
console.log(
  `  answered interrupts: ${done.resolvedInterrupts.map((r) => `${r.kind} -> ${JSON.stringify(r.response.text)}`).join(', ')}`,
);

// ---- Run 2: a reviewer that is never satisfied; the edge limit review -> plan (2) ends the loop.
console.log('\nRun 2: a reviewer that is never satisfied (edge limit review -> plan: 2)');
const strict = new PipelineRuntime(pipelineWith(10_000));
const paused2 = await strict.run('Release notes for v2');
console.log(`  (paused on ${paused2.interrupt?.kind ?? '?'}; answering "operators")`);
const ended = await show(strict.resumeStream(paused2, { text: 'operators' }));
console.log(`  ${summary(ended)}`);

console.log('\nThe pipeline as Mermaid (pipeline.toMermaid()):\n');
console.log(runtime.pipeline.toMermaid());
