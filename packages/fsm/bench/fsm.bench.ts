// The shared FSM workload (5 states; `review` with two guarded transitions on input.quality > 0.5;
// a 6-action cycle) through FsmStrategy.execute, next to the plain table floor (makeTableFsm) and
// XState v5 (createActor(machine).send), in one process run.
// Targets (docs/fsm.md): within 3x of the floor, at least 10x XState's transitions per second, and
// a refused canExecute costing no more than a successful execute. Issue 24: a refused execute (it
// throws InvalidTransitionError) at most 2 µs, and a refused tryExecute (the refusal as a value)
// at most 50 ns, next to XState's refused send (an event with no transition, ignored).
import { ClosureGuard, FsmStrategy } from '@signalyard/fsm';
import { createActor, createMachine } from 'xstate';
import { makeTableFsm } from '../../../scripts/bench/floor.mjs';
import { described, figure, measure, printTable, ratio } from '../../../scripts/bench/harness.mjs';
import { FSM, FSM_BATCH as BATCH, type FsmEvent as Ev } from '../../../scripts/bench/workloads.mjs';

const WORKLOAD = 'fsm: 5 states, guarded 6-action cycle';

// Signalyard
const quality = new ClosureGuard('quality', (input) => ((input as Ev).quality ?? 0) > 0.5);
const builder = FsmStrategy.builder().initial(FSM.initial);
for (const [from, event, guard, to] of FSM.transitions) {
  builder.transition(from, event, to, guard === null ? {} : { guard: quality });
}
const fsm = builder.build();
const refuser = builder.build(); // stays in `idle`

// Floor
const next = makeTableFsm(FSM);

// XState v5, the same machine
const on: Record<string, Record<string, unknown>> = Object.fromEntries(FSM.states.map((s) => [s, {}]));
for (const [from, event, guard, to] of FSM.transitions) {
  const branch =
    guard === null ? { target: to } : { target: to, guard: ({ event: e }: { event: Ev }) => (e.quality ?? 0) > 0.5 };
  const existing = on[from]![event];
  on[from]![event] = existing === undefined ? [branch] : [...(existing as unknown[]), branch];
}
const machine = createMachine({
  id: 'bench',
  initial: FSM.initial,
  states: Object.fromEntries(FSM.states.map((s) => [s, { on: on[s] }])),
} as never);
const actor = createActor(machine);
actor.start();
const refusingActor = createActor(machine); // stays in `idle`: `finish` is ignored there
refusingActor.start();

// All three visit the same states, or the figures mean nothing.
let floorState = FSM.initial;
for (let i = 0; i < FSM.cycle.length; i++) {
  const ev = FSM.cycle[i]!;
  fsm.execute(ev.type, ev);
  floorState = next(floorState, ev);
  actor.send(ev);
  const want = FSM.cycleStates[i];
  const xs = actor.getSnapshot().value as unknown;
  if (fsm.currentState !== want || floorState !== want || xs !== want) {
    throw new Error(
      `step ${i}: fsm ${fsm.currentState}, floor ${floorState}, xstate ${JSON.stringify(xs)}, expected ${want}`,
    );
  }
}

if (refuser.tryExecute(FSM.rejected.event.type).ok || refuser.canExecute(FSM.rejected.event.type))
  throw new Error('the rejected action was not refused');
refusingActor.send(FSM.rejected.event);
if (refusingActor.getSnapshot().value !== FSM.rejected.from) throw new Error('XState took the rejected action');

const cycle = FSM.cycle;
const REFUSED = FSM.rejected.event.type;
const THROW_BATCH = 500;
const n = cycle.length;
let sink = 0;
const results = await measure([
  {
    name: 'floor: makeTableFsm',
    batch: BATCH,
    fn: () => {
      let s = floorState;
      for (let i = 0; i < BATCH; i++) s = next(s, cycle[i % n]!);
      floorState = s;
    },
  },
  {
    name: 'FsmStrategy.execute',
    batch: BATCH,
    fn: () => {
      for (let i = 0; i < BATCH; i++) {
        const ev = cycle[i % n]!;
        fsm.execute(ev.type, ev);
      }
    },
  },
  {
    name: 'XState v5 actor.send',
    batch: BATCH,
    fn: () => {
      for (let i = 0; i < BATCH; i++) actor.send(cycle[i % n] as never);
    },
  },
  {
    name: 'FsmStrategy.canExecute (refused)',
    batch: BATCH,
    fn: () => {
      // `finish` has no transition from `idle`: the shared workload's rejected action.
      for (let i = 0; i < BATCH; i++) if (refuser.canExecute('finish')) sink++;
    },
  },
  {
    name: 'FsmStrategy.execute (refused: throws)',
    batch: THROW_BATCH,
    fn: () => {
      for (let i = 0; i < THROW_BATCH; i++) {
        try {
          refuser.execute(REFUSED);
        } catch (error) {
          if (error !== undefined) sink++;
        }
      }
    },
  },
  {
    name: 'FsmStrategy.tryExecute (refused)',
    batch: BATCH,
    fn: () => {
      for (let i = 0; i < BATCH; i++) if (!refuser.tryExecute(REFUSED).ok) sink++;
    },
  },
  {
    name: 'XState v5 actor.send (refused)',
    batch: BATCH,
    fn: () => {
      for (let i = 0; i < BATCH; i++) refusingActor.send(FSM.rejected.event);
    },
  },
]);
printTable('@signalyard/fsm: 5-state workload (per transition)', results);
const [floor, ours, xstate, refused, refusedThrow, refusedTry, xstateRefused] = results;
figure({
  workload: WORKLOAD,
  name: 'execute() time / table floor time',
  unit: 'x',
  samples: ratio(ours!, floor!),
  target: { atMost: 3 },
  against: described(floor!, 'floor: makeTableFsm'),
});
figure({
  workload: WORKLOAD,
  name: 'execute() speed-up over XState v5',
  unit: 'x',
  samples: ratio(xstate!, ours!),
  target: { atLeast: 10 },
  against: described(xstate!, 'XState v5 actor.send'),
});
figure({
  workload: WORKLOAD,
  name: 'refused canExecute() time / execute() time',
  unit: 'x',
  samples: ratio(refused!, ours!),
  target: { atMost: 1 },
  against: described(ours!, 'FsmStrategy.execute'),
});
figure({ workload: WORKLOAD, name: 'execute() per transition', unit: 'ns', samples: ours!.samples });
figure({
  workload: WORKLOAD,
  name: 'refused execute() (throws), per action',
  unit: 'ns',
  samples: refusedThrow!.samples,
  target: { atMost: 2000 },
  against: described(xstateRefused!, 'XState v5 refused send'),
});
figure({
  workload: WORKLOAD,
  name: 'refused tryExecute() (a value), per action',
  unit: 'ns',
  samples: refusedTry!.samples,
  target: { atMost: 50 },
  against: described(xstateRefused!, 'XState v5 refused send'),
});
if (sink < 0) console.log(sink);
