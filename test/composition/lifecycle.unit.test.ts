// src/composition/lifecycle.ts: start order derived from what each component needs, stop is start backwards.
import { describe, expect, it } from 'vitest';
import { lifecycle, type Component } from '../../src/composition/lifecycle.js';

function recorded(components: readonly Omit<Component, 'start' | 'stop'>[]) {
  const seen: string[] = [];
  const built = lifecycle(
    components.map((component) => ({
      ...component,
      start: async () => {
        seen.push(`start ${component.name}`);
      },
      stop: () => {
        seen.push(`stop ${component.name}`);
      },
    })),
  );
  return { built, seen };
}

describe('lifecycle', () => {
  it('starts each component after what it needs, ties in listing order, and stops in reverse', async () => {
    const { built, seen } = recorded([
      { name: 'join', needs: ['queue', 'connections'] },
      { name: 'queue', needs: ['connections'] },
      { name: 'store' },
      { name: 'connections', needs: ['store'] },
      { name: 'webhooks', needs: ['store'] },
    ]);
    expect(built.order).toEqual(['store', 'connections', 'queue', 'join', 'webhooks']);
    await built.start();
    await built.stop();
    expect(seen).toEqual([
      'start store',
      'start connections',
      'start queue',
      'start join',
      'start webhooks',
      'stop webhooks',
      'stop join',
      'stop queue',
      'stop connections',
      'stop store',
    ]);
  });

  it('runs components without a start or a stop in their place', async () => {
    const seen: string[] = [];
    const built = lifecycle([
      { name: 'store', stop: () => void seen.push('close store') },
      { name: 'open', needs: ['store'], start: () => void seen.push('open') },
    ]);
    await built.start();
    await built.stop();
    expect(seen).toEqual(['open', 'close store']);
  });

  it('refuses a need that is not listed, a name listed twice and a circle of needs', () => {
    expect(() => lifecycle<string>([{ name: 'a', needs: ['b'] }])).toThrow('component a needs b, which is not listed');
    expect(() => lifecycle([{ name: 'a' }, { name: 'a' }])).toThrow('component a is listed twice');
    expect(() =>
      lifecycle([{ name: 'a', needs: ['c'] }, { name: 'b', needs: ['a'] }, { name: 'c', needs: ['b'] }, { name: 'd' }]),
    ).toThrow('components need each other in a circle: a, b, c');
  });
});
