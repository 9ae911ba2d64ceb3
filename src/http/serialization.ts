/**
 * How response bodies are written: by Fastify's own serializer (fast-json-stringify, from the response schemas),
 * each compiled on the first answer that needs it and once per schema, instead of for every route at start.
 *
 * Compiling every response schema of every route (each served twice, with and without `/api`) was the largest
 * share of the process's start-up CPU, before it could listen and send what was queued (issue 25). A schema object
 * used by several routes, statuses or both aliases now compiles once; one never answered never compiles. A
 * serializer once built is kept for the process, by what its schema and serializer options say (their JSON), and
 * every later app the process builds takes it as it is: a test run builds hundreds of apps in one process, each with
 * schema objects of its own, and compiling their serializers again was about a tenth of the suite's CPU.
 *
 * Owns: when a response serializer is built, and sharing it between routes with the same schema object and between
 * apps with schemas that say the same.
 * Must never: change what is written (the serializer is the one Fastify would build itself, from its own
 * dependency, with the same options), or name a package the gateway does not declare in its imports.
 */
import { createRequire } from 'node:module';
import type { FastifyInstance, FastifyServerOptions } from 'fastify';

type Serialize = (data: unknown) => string;
type CompileRoute = (route: { schema: unknown; method: string; url: string; httpStatus: string }) => Serialize;
export type BuildSerializer = (externalSchemas: unknown, options: unknown) => CompileRoute;

/** Fastify's default serializer factory, resolved from Fastify's own dependencies, loaded when first needed. */
let fastifyDefault: BuildSerializer | null = null;
function defaultFactory(): BuildSerializer {
  if (fastifyDefault !== null) return fastifyDefault;
  const fromGateway = createRequire(import.meta.url);
  const fromFastify = createRequire(fromGateway.resolve('fastify'));
  const selector = fromFastify('@fastify/fast-json-stringify-compiler') as () => BuildSerializer;
  fastifyDefault = selector();
  return fastifyDefault;
}

/** One app's serializers: the Fastify option that installs them, and those not built yet. */
export interface DeferredSerializers {
  /** `schemaController` of the app's Fastify options. */
  readonly option: NonNullable<FastifyServerOptions['schemaController']>;
  /** Builds every serializer still waiting and returns how many (tests: a schema that cannot compile throws here). */
  compileAll(): number;
}

/**
 * Serializers built in this process, by their options and schema as JSON (bounded by the schemas the gateway has).
 * Only for contexts without shared schemas, as the gateway's: there a serializer depends on nothing else (the
 * route's method, URL and status only name it in errors).
 */
const builtInProcess = new Map<string, Serialize>();

/** How many serializers this process has built (tests: a later app builds none for schemas saying the same). */
export function serializersBuiltInProcess(): number {
  return builtInProcess.size;
}

/** The serializers of one app: its Fastify's own, each built on first use, once per schema object. */
export function deferredSerializers(): DeferredSerializers {
  // Built or waiting, by schema object (only in contexts without shared schemas, as the gateway's).
  const bySchema = new WeakMap<object, Serialize>();
  const waiting = new Set<() => Serialize>();

  function deferred(compile: () => Serialize): Serialize {
    let built: Serialize | null = null;
    const build = () => {
      // Out of the waiting list first: a schema that cannot compile throws at each use, as it would have at start.
      waiting.delete(build);
      built ??= compile();
      return built;
    };
    waiting.add(build);
    return (data) => (built ?? build())(data);
  }

  const buildSerializer: BuildSerializer = (externalSchemas, options) => {
    let compiler: CompileRoute | null = null;
    const real = (route: Parameters<CompileRoute>[0]) => {
      compiler ??= defaultFactory()(externalSchemas, options);
      return compiler(route);
    };
    const shared =
      typeof externalSchemas !== 'object' || externalSchemas === null || Object.keys(externalSchemas).length === 0;
    const optionsKey = JSON.stringify(options ?? null);
    /** The process's serializer for the route's schema, built now if it has none yet. */
    const sharedInProcess = (route: Parameters<CompileRoute>[0]) => {
      const key = `${optionsKey}\n${JSON.stringify(route.schema)}`;
      let serialize = builtInProcess.get(key);
      if (serialize === undefined) builtInProcess.set(key, (serialize = real(route)));
      return serialize;
    };
    return (route) => {
      const schema = route.schema;
      if (!shared || typeof schema !== 'object' || schema === null) return deferred(() => real(route));
      const known = bySchema.get(schema);
      if (known !== undefined) return known;
      const serialize = deferred(() => sharedInProcess(route));
      bySchema.set(schema, serialize);
      return serialize;
    };
  };

  return {
    option: { compilersFactory: { buildSerializer: buildSerializer as never } },
    compileAll() {
      const builds = [...waiting];
      for (const build of builds) build();
      return builds.length;
    },
  };
}

const ofApp = new WeakMap<FastifyInstance, DeferredSerializers>();

/** Names the app the serializers serve, for `compileDeferredSerializers`. */
export function serializersOf(app: FastifyInstance, serializers: DeferredSerializers): void {
  ofApp.set(app, serializers);
}

/** Builds every serializer of the app still waiting and returns how many. */
export function compileDeferredSerializers(app: FastifyInstance): number {
  return ofApp.get(app)?.compileAll() ?? 0;
}
