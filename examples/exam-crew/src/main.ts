// An exam crew — teacher → (student + reporter in parallel) → teacher … — run
// with a scripted model, printing the event stream as it happens.
//
// The reporter answers faster than the student, so the members finish out of order; the
// aggregated results still come in group-declaration order (student, then reporter).
import type { ChatRequest } from '@signalyard/core';
import { scriptedModel } from '@signalyard/core/testing';
import { CrewExecutor, loadCrewConfig, type CrewEvent } from '@signalyard/crew';

const crew = await loadCrewConfig(new URL('../crew.yaml', import.meta.url));

// One scripted model per agent: small delays stand in for provider latency.
const model = {
  teacher: scriptedModel(
    [
      'First question: what is 7 × 6? [QUESTION]',
      (request: ChatRequest) =>
        request.messages.at(-1)?.content.includes('42') === true
          ? 'Correct. Second question: what is the capital of Vietnam? [QUESTION]'
          : 'Not quite. Try this one: what is the capital of Vietnam? [QUESTION]',
      'Both right: well done. The exam is over. [END_EXAM]',
    ],
    { delayMs: 20 },
  ),
  student: scriptedModel(['7 × 6 = 42. [ANSWER]', 'Hà Nội. [ANSWER]'], { delayMs: 60 }),
  reporter: scriptedModel(['Q1 asked: multiplication.', 'Q2 asked: geography.'], { delayMs: 10 }),
};

const executor = new CrewExecutor({ crew, model });

const quote = (text: string): string => JSON.stringify(text.length > 90 ? `${text.slice(0, 87)}...` : text);

/**
 * One readable line per event; members of a parallel group are indented under it. Text deltas
 * (each reply as it streams, markers hidden) get no line: the whole reply shows at `agent_response`.
 */
function describe(event: CrewEvent): string | undefined {
  switch (event.type) {
    case 'text_delta':
      return undefined;
    case 'agent_start':
      return `${event.group === undefined ? '' : '    '}▶ ${event.agentId} starts`;
    case 'agent_response':
      return `${event.group === undefined ? '' : '    '}  ${event.agentId}: ${quote(event.content)}`;
    case 'tool_start':
      return `    ${event.agentId} calls ${event.call.name}`;
    case 'tool_result':
      return `    ${event.agentId} ← ${event.call.name}${event.isError ? ' (error)' : ''}`;
    case 'handoff':
      return `→ handoff ${event.from} → ${event.to} via ${event.via}${event.signal === undefined ? '' : ` ${event.signal}`} (${event.handoffs} so far)`;
    case 'parallel_start':
      return `⇉ parallel group ${event.group}: ${event.agents.join(' + ')}`;
    case 'parallel_member_end':
      return `    ✓ ${event.agentId} ${event.status}`;
    case 'parallel_end':
      return `⇇ ${event.group} done; succeeded: ${event.succeeded.join(', ')}`;
    case 'terminate':
      return `■ ${event.agentId} ends the run: ${event.reason}${event.signal === undefined ? '' : ` (${event.signal})`}`;
    case 'pause':
      return `‖ paused at ${event.agentId}`;
    case 'warning':
      return `! ${event.agentId}: ${event.message}`;
    case 'error':
      return `✗ ${event.error.code}: ${event.error.message}`;
    case 'end':
      return `= ${event.response.reason} after ${event.response.handoffs} handoffs; ${event.response.state.history.length} messages in the history; the user sees ${quote(event.response.visibleContent)}`;
  }
}

console.log('Exam crew: teacher → [student + reporter] → teacher …\n');
let history: readonly { role: string; name?: string; content: string }[] = [];
for await (const event of executor.executeStream('Please start the exam.')) {
  const line = describe(event);
  if (line !== undefined) console.log(line);
  if (event.type === 'end') history = event.response.state.history;
  if (event.type === 'error') process.exitCode = 1;
}

console.log('\nThe shared history every agent saw (members only saw it up to the question):\n');
for (const [i, m] of history.entries()) {
  const who = m.role === 'assistant' ? (m.name ?? 'assistant') : m.role;
  const [first = '', ...rest] = m.content.split('\n');
  console.log([`[${i}] ${who}: ${first}`, ...rest.map((line) => (line === '' ? '' : `      ${line}`))].join('\n'));
}
