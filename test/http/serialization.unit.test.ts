// src/http/serialization.ts: response serializers are Fastify's own, built on first use and once per schema object.
import Fastify from 'fastify';
import { describe, expect, it } from 'vitest';
import { deferredSerializers, type BuildSerializer } from '../../src/http/serialization.js';

const route = (schema: unknown, url = '/x') => ({ schema, method: 'GET', url, httpStatus: '200' });
const builder = (serializers = deferredSerializers()) =>
  serializers.option.compilersFactory!.buildSerializer as unknown as BuildSerializer;

describe('deferred response serializers', () => {
  it('write what Fastify’s own serializer writes: declared fields only, in their types', async () => {
    const schema = {
      type: 'object',
      properties: { id: { type: 'integer' }, name: { type: 'string' }, at: { type: 'string', format: 'date-time' } },
    };
    const data = { id: 7, name: 'a "quoted" name', at: '2026-01-01T00:00:00.000Z', secret: 'never written' };
    const serialize = builder()({}, {})(route(schema));
    const fastify = Fastify();
    fastify.get('/x', { schema: { response: { 200: schema } } }, async () => data);
    const res = await fastify.inject({ method: 'GET', url: '/x' });
    await fastify.close();
    expect(serialize(data)).toBe(res.body);
    expect(JSON.parse(serialize(data))).toEqual({ id: 7, name: 'a "quoted" name', at: '2026-01-01T00:00:00.000Z' });
  });

  it('compile once per schema object: both aliases of a route and every status sharing it get one serializer', () => {
    const schema = { type: 'object', properties: { n: { type: 'number' } } };
    const serializers = deferredSerializers();
    const compile = builder(serializers)({}, {});
    const first = compile(route(schema, '/devices'));
    expect(compile(route(schema, '/api/devices'))).toBe(first);
    // Another encapsulation context of the same app shares it; another app has its own.
    expect(builder(serializers)({}, {})(route(schema, '/other'))).toBe(first);
    expect(builder()({}, {})(route(schema, '/other'))).not.toBe(first);
    expect(serializers.compileAll()).toBe(1);
    // An equal but distinct object is its own.
    expect(compile(route({ ...schema }))).not.toBe(first);
  });

  it('defer a schema that cannot compile to its first use, and compileAll reaches it', () => {
    const serializers = deferredSerializers();
    const broken = { type: 'object', properties: { a: { $ref: '#/definitions/missing' } } };
    const serialize = builder(serializers)({}, {})(route(broken));
    expect(() => serializers.compileAll()).toThrow();
    // Out of the waiting list once tried; each use still fails, as the start would have.
    expect(serializers.compileAll()).toBe(0);
    expect(() => serialize({ a: 1 })).toThrow();
    const fine = builder(serializers)({}, {})(route({ type: 'object', properties: { b: { type: 'string' } } }));
    expect(serializers.compileAll()).toBe(1);
    expect(fine({ b: 'x' })).toBe('{"b":"x"}');
  });

  it('keep serializers apart when a context has shared schemas', () => {
    const schema = { type: 'object', properties: { n: { type: 'number' } } };
    const compile = builder()({ shared: { $id: 'shared', type: 'string' } }, {});
    expect(compile(route(schema))).not.toBe(compile(route(schema)));
    expect(compile(route(schema))({ n: 1 })).toBe('{"n":1}');
  });
});
