// Every public function of @signalyard/sessions that takes a string parameter (or a string
// field of an object it takes), given each kind of non-string: a typed SignalyardError with its
// code (thrown, or as a rejection), never a TypeError.
import { describe, expect, it } from 'vitest';
import { isSignalyardError } from '@signalyard/core';
import {
  RouteResolver,
  SessionKey,
  agentIdOf,
  formatSessionKey,
  loadRoutingConfig,
  normalizeAgentId,
  parseRoutingConfig,
  parseSessionKey,
  resolveLinkedPeerId,
  resolveRoute,
} from '@signalyard/sessions';
import { NON_STRINGS, expectCode, failure } from '@signalyard/test-utils';

type Call = (bad: never) => unknown;

const KEY = 'SESSION_KEY_INVALID';
const CONFIG = 'CONFIG_INVALID';
const resolver = new RouteResolver({});
const main = SessionKey.main('main');

/** [function, call with the bad value, expected code, the parameter is optional (undefined is valid)]. */
const THROWING: readonly (readonly [string, Call, string, boolean?])[] = [
  ['normalizeAgentId(input)', (bad) => normalizeAgentId(bad), KEY],
  ['SessionKey.main(agentId)', (bad) => SessionKey.main(bad), KEY],
  ['SessionKey.main(agentId, mainKey)', (bad) => SessionKey.main('main', bad), KEY, true],
  ['SessionKey.directMessage(agentId)', (bad) => SessionKey.directMessage(bad, 'telegram', 'u1'), KEY],
  ['SessionKey.directMessage(channel)', (bad) => SessionKey.directMessage('main', bad, 'u1'), KEY],
  ['SessionKey.directMessage(peerId)', (bad) => SessionKey.directMessage('main', 'telegram', bad), KEY],
  ['SessionKey.directMessage(dmScope)', (bad) => SessionKey.directMessage('main', 'telegram', 'u1', bad), KEY, true],
  ['SessionKey.group(agentId)', (bad) => SessionKey.group(bad, 'slack', 'group', 'g1'), KEY],
  ['SessionKey.group(channel)', (bad) => SessionKey.group('main', bad, 'group', 'g1'), KEY],
  ['SessionKey.group(peerKind)', (bad) => SessionKey.group('main', 'slack', bad, 'g1'), KEY],
  ['SessionKey.group(peerId)', (bad) => SessionKey.group('main', 'slack', 'group', bad), KEY],
  [
    'SessionKey.group({ threadId })',
    (bad) => SessionKey.group('main', 'slack', 'group', 'g1', { threadId: bad }),
    KEY,
    true,
  ],
  ['SessionKey.task(agentId)', (bad) => SessionKey.task(bad, 'cron', 't1'), KEY],
  ['SessionKey.task(taskType)', (bad) => SessionKey.task('main', bad, 't1'), KEY],
  ['SessionKey.task(taskId)', (bad) => SessionKey.task('main', 'cron', bad), KEY],
  ['SessionKey.subagent(subagentId)', (bad) => SessionKey.subagent(main, bad), KEY],
  ['SessionKey.ephemeral(agentId)', (bad) => SessionKey.ephemeral(bad), KEY],
  ['SessionKey.ephemeral(ephemeralId)', (bad) => SessionKey.ephemeral('main', bad), KEY, true],
  ['agentIdOf({ agentId })', (bad) => agentIdOf({ kind: 'main', agentId: bad, mainKey: 'main' }), KEY],
  ['formatSessionKey({ kind })', (bad) => formatSessionKey({ kind: bad, agentId: 'main', mainKey: 'main' }), KEY],
  ['formatSessionKey({ agentId })', (bad) => formatSessionKey({ kind: 'main', agentId: bad, mainKey: 'main' }), KEY],
  ['formatSessionKey({ mainKey })', (bad) => formatSessionKey({ kind: 'main', agentId: 'main', mainKey: bad }), KEY],
  [
    'formatSessionKey({ peerId })',
    (bad) => formatSessionKey({ kind: 'direct_message', agentId: 'main', peerId: bad, dmScope: 'per-peer' }),
    KEY,
  ],
  [
    'formatSessionKey({ channel })',
    (bad) =>
      formatSessionKey({
        kind: 'direct_message',
        agentId: 'main',
        peerId: 'u',
        dmScope: 'per-channel-peer',
        channel: bad,
      }),
    KEY,
  ],
  ['parseSessionKey(text)', (bad) => parseSessionKey(bad), KEY],
  ['RouteResolver#resolve({ channel })', (bad) => resolver.resolve({ channel: bad }), KEY],
  ['RouteResolver#resolve({ accountId })', (bad) => resolver.resolve({ channel: 'cli', accountId: bad }), KEY, true],
  ['RouteResolver#resolve({ guildId })', (bad) => resolver.resolve({ channel: 'cli', guildId: bad }), KEY, true],
  ['RouteResolver#resolve({ teamId })', (bad) => resolver.resolve({ channel: 'cli', teamId: bad }), KEY, true],
  [
    'RouteResolver#resolve({ peer.kind })',
    (bad) => resolver.resolve({ channel: 'cli', peer: { kind: bad, id: 'u' } }),
    KEY,
  ],
  [
    'RouteResolver#resolve({ peer.id })',
    (bad) => resolver.resolve({ channel: 'cli', peer: { kind: 'dm', id: bad } }),
    KEY,
  ],
  [
    'RouteResolver#resolve({ threadId })',
    (bad) => resolver.resolve({ channel: 'cli', peer: { kind: 'group', id: 'g' }, threadId: bad }),
    KEY,
    true,
  ],
  ['resolveRoute(config, { channel })', (bad) => resolveRoute({}, { channel: bad }), KEY],
  ['new RouteResolver({ defaultAgentId })', (bad) => new RouteResolver({ defaultAgentId: bad }), CONFIG, true],
  ['new RouteResolver({ session.dmScope })', (bad) => new RouteResolver({ session: { dmScope: bad } }), CONFIG, true],
  [
    'new RouteResolver({ bindings[].agentId })',
    (bad) => new RouteResolver({ bindings: [{ agentId: bad, match: { channel: 'cli' } }] }),
    CONFIG,
  ],
  [
    'new RouteResolver({ bindings[].match.channel })',
    (bad) => new RouteResolver({ bindings: [{ agentId: 'a', match: { channel: bad, accountId: 'x' } }] }),
    CONFIG,
    true,
  ],
  [
    'new RouteResolver({ bindings[].match.peer.id })',
    (bad) =>
      new RouteResolver({ bindings: [{ agentId: 'a', match: { channel: 'cli', peer: { kind: 'dm', id: bad } } }] }),
    CONFIG,
  ],
  [
    'new RouteResolver({ session.identityLinks[name][i] })',
    (bad) => new RouteResolver({ session: { identityLinks: { john: [bad] } } }),
    CONFIG,
  ],
  ['resolveLinkedPeerId(links, channel)', (bad) => resolveLinkedPeerId({}, bad, 'u1'), KEY],
  ['resolveLinkedPeerId(links, channel, peerId)', (bad) => resolveLinkedPeerId({}, 'telegram', bad), KEY],
  ['resolveLinkedPeerId(links[name][i])', (bad) => resolveLinkedPeerId({ john: [bad] }, 'telegram', 'u1'), CONFIG],
  ['parseRoutingConfig(text)', (bad) => parseRoutingConfig(bad), CONFIG],
  ['loadRoutingConfig(path)', (bad) => loadRoutingConfig(bad), CONFIG],
];

describe.each(NON_STRINGS)('sessions, given %s where a string is expected', (_label, bad: unknown) => {
  const rows = THROWING.filter(([, , , optional]) => !(optional === true && bad === undefined)).map(
    ([name, call, code]) => ({ name, call, code }),
  );
  it.each(rows)('$name fails with a SignalyardError and its code', async ({ call, code }) => {
    const error = await failure(() => call(bad as never));
    expect(isSignalyardError(error)).toBe(true);
    expectCode(error, code);
  });
});
