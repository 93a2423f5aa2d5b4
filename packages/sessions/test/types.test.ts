import { describe, expectTypeOf, it } from 'vitest';
import {
  SessionKey,
  agentIdOf,
  formatSessionKey,
  parseRoutingConfig,
  parseSessionKey,
  resolveLinkedPeerId,
  resolveRoute,
  type DmScope,
  type InboundRoute,
  type MatchedBy,
  type PeerKind,
  type RouteResolver,
  type ResolvedRoute,
  type RouteBinding,
  type RoutingConfig,
  type RoutingConfigInput,
  type TaskType,
} from '@signalyard/sessions';

describe('public types', () => {
  it('the contract unions', () => {
    expectTypeOf<DmScope>().toEqualTypeOf<'main' | 'per-peer' | 'per-channel-peer'>();
    expectTypeOf<PeerKind>().toEqualTypeOf<'group' | 'channel' | 'thread'>();
    expectTypeOf<TaskType>().toEqualTypeOf<'cron' | 'webhook' | 'scheduled'>();
    expectTypeOf<MatchedBy>().toEqualTypeOf<'peer' | 'guild' | 'team' | 'account' | 'channel' | 'default'>();
    expectTypeOf<SessionKey['kind']>().toEqualTypeOf<
      'main' | 'direct_message' | 'group' | 'task' | 'subagent' | 'ephemeral'
    >();
  });

  it('SessionKey narrows on kind', () => {
    const key = parseSessionKey('agent:main:main');
    if (key.kind === 'subagent') expectTypeOf(key.parent).toEqualTypeOf<SessionKey>();
    if (key.kind === 'direct_message') expectTypeOf(key.channel).toEqualTypeOf<string | undefined>();
    if (key.kind === 'group') expectTypeOf(key.threadId).toEqualTypeOf<string | undefined>();
  });

  it('function signatures', () => {
    expectTypeOf(SessionKey.main('x')).toEqualTypeOf<SessionKey>();
    expectTypeOf(formatSessionKey).toEqualTypeOf<(key: SessionKey) => string>();
    expectTypeOf(parseSessionKey).returns.toEqualTypeOf<SessionKey>();
    expectTypeOf(agentIdOf).returns.toEqualTypeOf<string>();
    expectTypeOf(parseRoutingConfig).returns.toEqualTypeOf<RoutingConfig>();
    expectTypeOf(resolveRoute).parameters.toEqualTypeOf<[RoutingConfigInput, InboundRoute]>();
    expectTypeOf(resolveLinkedPeerId).returns.toEqualTypeOf<string | undefined>();
    expectTypeOf<RouteResolver['resolve']>().returns.toEqualTypeOf<ResolvedRoute>();
    expectTypeOf<ResolvedRoute['binding']>().toEqualTypeOf<RouteBinding | undefined>();
  });

  it('a RoutingConfig is a RoutingConfigInput, and inputs may be partial and readonly', () => {
    expectTypeOf<RoutingConfig>().toExtend<RoutingConfigInput>();
    const input = { session: { caseSensitiveChannels: ['matrix'] as const } } satisfies RoutingConfigInput;
    expectTypeOf(input).toExtend<RoutingConfigInput>();
    // Deep-partial: a binding without its agent id type-checks, and validation reports it.
    const partial: RoutingConfigInput = { bindings: [{ match: { peer: { id: 'x' } } }] };
    expectTypeOf(partial).toEqualTypeOf<RoutingConfigInput>();
  });
});
