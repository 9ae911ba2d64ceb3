// src/http/serialization.ts: response serializers are Fastify's own, built on first use, once per schema object in
// an app and once per schema a process (by what the schema says). src/http/validation.ts: validators likewise.
import Fastify from 'fastify';
import { describe, expect, it } from 'vitest';
import { deferredSerializers, serializersBuiltInProcess, type BuildSerializer } from '../../src/http/serialization.js';
import { installValidation, validatorsCompiledInProcess } from '../../src/http/validation.js';

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

  it('build once a process for schemas that say the same, in any app; a schema that says otherwise is its own', () => {
    // A property name of this test's own, so no earlier file of the process built the same schema.
    const schema = () => ({ type: 'object', properties: { builtOnce: { type: 'string', maxLength: 3 } } });
    const before = serializersBuiltInProcess();
    const first = deferredSerializers();
    const serialize = builder(first)({}, {})(route(schema()));
    expect(first.compileAll()).toBe(1);
    expect(serializersBuiltInProcess()).toBe(before + 1);
    // Another app, another object saying the same: served, nothing built.
    const second = deferredSerializers();
    const again = builder(second)({}, {})(route(schema()));
    expect(second.compileAll()).toBe(1);
    expect(serializersBuiltInProcess()).toBe(before + 1);
    expect(again({ builtOnce: 'abc', other: 1 })).toBe(serialize({ builtOnce: 'abc', other: 1 }));
    // One keyword apart, or other serializer options: built again.
    const integer = { type: 'object', properties: { builtOnce: { type: 'integer' } } };
    expect(builder()({}, {})(route(integer))({ builtOnce: 2.7 })).toBe('{"builtOnce":2}');
    expect(builder()({}, { rounding: 'ceil' })(route(integer))({ builtOnce: 2.7 })).toBe('{"builtOnce":3}');
    expect(serializersBuiltInProcess()).toBe(before + 3);
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

describe('validators of the process', () => {
  async function statusOf(body: unknown, limit: number): Promise<unknown> {
    const app = Fastify();
    installValidation(app);
    const schema = {
      type: 'object',
      properties: { compiledOnce: { type: 'string', maxLength: limit } },
      required: ['compiledOnce'],
    };
    app.post(
      '/x',
      { schema: { body: schema, querystring: { type: 'object', properties: { n: { type: 'integer' } } } } },
      async () => 'ok',
    );
    const res = await app.inject({ method: 'POST', url: '/x?n=2', payload: body as object });
    await app.close();
    return res.statusCode;
  }

  it('compile once a process for schemas that say the same, in any app; a schema that says otherwise is its own', async () => {
    // Both validators compiled (a refused body stops before the query string is checked).
    expect(await statusOf({ compiledOnce: 'abc' }, 3)).toBe(200);
    const after = validatorsCompiledInProcess();
    // More apps with schema objects of their own that say the same: checked alike, nothing compiled.
    expect(await statusOf({ compiledOnce: 'abcd' }, 3)).toBe(400);
    expect(await statusOf({ compiledOnce: 'abc' }, 3)).toBe(200);
    expect(validatorsCompiledInProcess()).toBe(after);
    // A limit apart: its own validator, its own answer.
    expect(await statusOf({ compiledOnce: 'abcd' }, 4)).toBe(200);
    expect(validatorsCompiledInProcess()).toBe(after + 1);
  });
});
