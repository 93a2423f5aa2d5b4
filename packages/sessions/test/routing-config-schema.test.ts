import { describe, expect, expectTypeOf, it } from 'vitest';
import { routingConfigSchema, type RoutingConfig, type RoutingConfigInput } from '@signalyard/sessions';

describe('routingConfigSchema', () => {
  it('validates the code form and fills defaults', () => {
    const result = routingConfigSchema.safeParse({ bindings: [{ agentId: 'tg', match: { channel: 'telegram' } }] });
    expect(result.success).toBe(true);
    expect(result.data).toStrictEqual({
      defaultAgentId: 'main',
      session: { dmScope: 'per-peer', identityLinks: {}, caseSensitiveChannels: [] },
      bindings: [{ agentId: 'tg', match: { channel: 'telegram' } }],
    });
  });

  it('reports every problem with its path, cross-field checks included', () => {
    const result = routingConfigSchema.safeParse({
      defaultAgentId: 'Main',
      colour: 'red',
      session: { identityLinks: { a: ['telegram:1'], b: ['telegram:1', 'bare'] } },
      bindings: [
        { agentId: 'x', match: { channel: 'slack' } },
        { agentId: 'y', match: { channel: 'SLACK' } },
        { agentId: 'z', match: { peer: { kind: 'dm', id: 'u' } } },
      ],
    });
    expect(result.success).toBe(false);
    const paths = result.error?.issues.map((i) => i.path.join('.')).sort();
    expect(paths).toStrictEqual(
      [
        '',
        'defaultAgentId',
        'session.identityLinks.b.1',
        'session.identityLinks.b.0',
        'bindings.1',
        'bindings.2.match.channel',
      ].sort(),
    );
  });

  it('does not share default objects between parses', () => {
    const a = routingConfigSchema.parse({});
    const b = routingConfigSchema.parse({});
    expect(a.session).not.toBe(b.session);
    expect(a.bindings).not.toBe(b.bindings);
    expect(a.session.identityLinks).not.toBe(b.session.identityLinks);
  });

  it('is typed RoutingConfigInput in, RoutingConfig out', () => {
    expectTypeOf<ReturnType<typeof routingConfigSchema.parse>>().toEqualTypeOf<RoutingConfig>();
    expectTypeOf<Parameters<typeof routingConfigSchema.parse>[0]>().toBeUnknown();
    const input: RoutingConfigInput = { session: { dmScope: 'main' } };
    expect(routingConfigSchema.parse(input).session.dmScope).toBe('main');
  });
});
