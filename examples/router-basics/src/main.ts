// Composes a router from three authorities and explains how each signal is decided:
//  - a strategy (a "maintenance window" workflow) that vetoes user messages while it is active,
//  - the agent's own routes (commands become transitions, everything else continues),
//  - a plugin (a profanity filter) whose default the agent overrides where it has its own route.
import {
  Action,
  DirectStrategy,
  SignalKind,
  formatAction,
  signal,
  type Plugin,
  type Signal,
  type SignalRoute,
} from '@signalyard/core';
import { ComposedRouter, type RouteDecision } from '@signalyard/router';

/** A strategy with one state flag and one strategy-tier route that gates user messages. */
class MaintenanceStrategy extends DirectStrategy {
  active = false;
  override signalRoutes(): readonly SignalRoute[] {
    return [
      {
        kind: SignalKind.UserMessage,
        name: 'maintenance-gate',
        predicate: () => this.active,
        action: Action.reject('maintenance'),
      },
      { kind: SignalKind.Stop, name: 'stop-now', action: Action.ForceStop },
    ];
  }
}

const textOf = (s: Signal): string => (typeof s.payload === 'string' ? s.payload : '');

const agentRoutes: SignalRoute[] = [
  {
    kind: SignalKind.UserMessage,
    name: 'slash-command',
    priority: 10,
    predicate: (s) => textOf(s).startsWith('/'),
    action: Action.transition('command'),
  },
  { kind: SignalKind.UserMessage, name: 'chat', action: Action.Continue },
  { kind: SignalKind.Timer, name: 'heartbeat', action: Action.transition('check') },
];

const profanityFilter: Plugin = {
  name: 'profanity-filter',
  signalRoutes: () => [
    {
      kind: SignalKind.UserMessage,
      name: 'block-profanity',
      priority: 100,
      predicate: (s) => /\bdarn\b/i.test(textOf(s)),
      action: Action.reject('profanity'),
    },
    { kind: SignalKind.custom('webhook'), name: 'webhook-default', action: Action.custom('log-webhook') },
  ],
};

const strategy = new MaintenanceStrategy();
const router = ComposedRouter.compose({ strategy, agent: agentRoutes, plugins: [profanityFilter] });

function show(label: string, s: Signal): void {
  const decision: RouteDecision = router.explain(s, { sessionKey: 'agent:main:main', agentId: 'main' });
  const by = decision.tier === undefined ? 'no route' : `${decision.tier} tier, route "${decision.route?.name ?? '?'}"`;
  console.log(`${label.padEnd(50)} -> ${formatAction(decision.action).padEnd(22)} (${by})`);
  for (const c of decision.considered) {
    console.log(`${' '.repeat(8)}${c.tier.padEnd(9)} ${(c.route.name ?? c.route.kind).padEnd(18)} ${c.outcome}`);
  }
}

console.log('Signalyard router example: strategy routes beat agent routes beat plugin routes.\n');
show('user_message "hello"', signal(SignalKind.UserMessage, 'hello'));
show('user_message "/deploy"', signal(SignalKind.UserMessage, '/deploy'));
show('user_message "darn it" (agent overrides plugin)', signal(SignalKind.UserMessage, 'darn it'));
show('timer', signal(SignalKind.Timer));
show('custom:webhook (only the plugin routes it)', signal(SignalKind.custom('webhook'), { id: 7 }));
show('tool_result (nobody routes it)', signal(SignalKind.ToolResult, {}));
show('stop', signal(SignalKind.Stop));

strategy.active = true;
console.log('\n-- maintenance window opens: the strategy tier vetoes user messages --\n');
show('user_message "hello"', signal(SignalKind.UserMessage, 'hello'));
show('user_message "/deploy"', signal(SignalKind.UserMessage, '/deploy'));
