/**
 * How request schemas are checked.
 *
 * Owns: the validator settings. Bodies are checked as sent (a number sent as
 * "5" in JSON is wrong, not coerced); a form body has already had its texts
 * read as the schema's types at the edge (src/forms.ts), never here. Query strings and path
 * parameters are text by nature, so they are coerced to the declared types,
 * but a whole number must be written as one (decimal digits): Ajv alone would
 * take `0x1`, `1e2` or `1 ` for 1, 100 and 1, so `/devices/0x1` named device 1.
 * Every failure is reported, not only the first, so `errors` names them all.
 * A route's validators are compiled on its first request that needs them, not at start (issue 25: compiling
 * every route's schemas delayed the first send after a restart); `compileDeferredValidators` compiles the rest.
 * Validators are the process's, kept by what their schema says (its JSON) and shared by every app it builds: a test
 * run builds hundreds of apps in one process, each with schema objects of its own, and compiled them all again.
 * A body schema marked with `validatedByHandler` is only documented here: its
 * route's service validates it with the same schemas and the contract's own
 * messages (the message send bodies).
 */
import { Ajv, type Options } from 'ajv';
import * as addFormatsModule from 'ajv-formats';
import type { FastifyInstance, FastifySchema } from 'fastify';
import type { ValidateFunction } from 'ajv';
import { TypeGuard, type TSchema } from '@sinclair/typebox';

// ajv-formats is CommonJS; its default export arrives wrapped under ESM.
const addFormats = (addFormatsModule as unknown as { default: (ajv: Ajv) => Ajv }).default;

// No optimising pass over the generated code (`code.optimize`): compiling takes 40 % less CPU, and the validators run as
// fast (docs/internals.md, Running and operating).
const common: Options = {
  allErrors: true,
  useDefaults: true,
  removeAdditional: false,
  strict: false,
  code: { optimize: false },
};

const handlerValidated = new WeakSet<object>();

/** Marks a body schema as documented by the route but validated by its service (same schema). */
export function validatedByHandler<T extends object>(schema: T): T {
  handlerValidated.add(schema);
  return schema;
}

/** True for a body schema its route's handler validates (src/forms.ts must leave such bodies to it too). */
export function isValidatedByHandler(schema: unknown): boolean {
  return typeof schema === 'object' && schema !== null && handlerValidated.has(schema);
}

const accept = () => true;

/** True for a body schema made with `Type.Optional` (e.g. NoFieldsBody): no body at all is one of its forms. */
export function isOptionalBody(schema: unknown): boolean {
  return typeof schema === 'object' && schema !== null && TypeGuard.IsOptional(schema as TSchema);
}

/** The validator of an optional body: a request without one passes; one that has a body is checked. */
function orNoBody(validate: ValidateFunction): ValidateFunction {
  const checked = ((data: unknown) => {
    // Fastify hands a validator `null` for a request without a body (a JSON body of `null` is refused by its parser).
    if (data === undefined || data === null) return true;
    const valid = validate(data);
    checked.errors = validate.errors;
    return valid;
  }) as ValidateFunction;
  return checked;
}

/** A validator instance of the process, and what it compiled by the schema's JSON (bounded by the gateway's schemas). */
interface Compiler {
  readonly ajv: Ajv;
  readonly compiled: Map<string, ValidateFunction>;
}

function compilerOf(options: Options): Compiler {
  const ajv = new Ajv(options);
  addFormats(ajv);
  return { ajv, compiled: new Map() };
}

/** The process's compilers: bodies as sent, and query strings and path parameters coerced from text. */
let compilers: { bodies: Compiler; textual: Compiler } | null = null;

/** The validator of `schema`, compiled once a process for each schema that says the same. */
function compiledOnce(compiler: Compiler, schema: FastifySchema & object): ValidateFunction {
  const key = JSON.stringify(schema);
  let validate = compiler.compiled.get(key);
  if (validate === undefined) compiler.compiled.set(key, (validate = compiler.ajv.compile(schema)));
  return validate;
}

/** How many validators this process has compiled (tests: a later app compiles none for schemas saying the same). */
export function validatorsCompiledInProcess(): number {
  return (compilers?.bodies.compiled.size ?? 0) + (compilers?.textual.compiled.size ?? 0);
}

export function installValidation(app: FastifyInstance): void {
  compilers ??= {
    bodies: compilerOf({ ...common, coerceTypes: false }),
    textual: compilerOf({ ...common, coerceTypes: true }),
  };
  const { bodies, textual } = compilers;
  const waiting = new Set<() => ValidateFunction>();
  deferred.set(app, waiting);
  const onFirstUse = (compile: () => ValidateFunction) => deferredValidator(waiting, compile);
  app.setValidatorCompiler(({ schema, httpPart }) => {
    if (httpPart === 'body' && handlerValidated.has(schema)) return accept;
    // Compiled on the first request that needs it (once a process for each schema that says the same), not for every
    // route at start.
    if (httpPart === 'body' && isOptionalBody(schema))
      return onFirstUse(() => orNoBody(compiledOnce(bodies, schema as FastifySchema & object)));
    if (httpPart === 'body') return onFirstUse(() => compiledOnce(bodies, schema as FastifySchema & object));
    return onFirstUse(() => withDecimalIntegers(schema, compiledOnce(textual, schema as FastifySchema & object)));
  });
}

/** Each app's validators not compiled yet: `compileDeferredValidators` compiles them (tests: every schema compiles). */
const deferred = new WeakMap<FastifyInstance, Set<() => ValidateFunction>>();

/** A validator compiled on its first call; its `errors` are those of the compiled one's last call. */
function deferredValidator(waiting: Set<() => ValidateFunction>, compile: () => ValidateFunction): ValidateFunction {
  let compiled: ValidateFunction | null = null;
  const build = () => {
    waiting.delete(build);
    compiled ??= compile();
    return compiled;
  };
  waiting.add(build);
  const validate = ((data: unknown) => {
    const real = compiled ?? build();
    const valid = real(data);
    validate.errors = real.errors;
    return valid;
  }) as ValidateFunction;
  return validate;
}

/** Compiles every validator still waiting and returns how many (a schema that cannot compile throws here). */
export function compileDeferredValidators(app: FastifyInstance): number {
  const builds = [...(deferred.get(app) ?? [])];
  for (const build of builds) build();
  return builds.length;
}

const DECIMAL = /^(0|-?[1-9][0-9]*)$/;

/** Integer properties of a params or querystring schema (one level: both are flat objects). */
function integerProperties(schema: unknown): string[] {
  const properties = (schema as { properties?: Record<string, { type?: unknown }> } | null)?.properties;
  if (properties === undefined) return [];
  return Object.keys(properties).filter((name) => properties[name]?.type === 'integer');
}

/** Refuses an integer written other than in decimal digits, before Ajv coerces it. */
function withDecimalIntegers(schema: unknown, validate: ValidateFunction): ValidateFunction {
  const integers = integerProperties(schema);
  if (integers.length === 0) return validate;
  const checked = ((data: Record<string, unknown> | null) => {
    const errors = integers
      .filter((name) => typeof data?.[name] === 'string' && !DECIMAL.test(data[name]))
      .map((name) => ({
        instancePath: `/${name}`,
        schemaPath: `#/properties/${name}/type`,
        keyword: 'type',
        params: { type: 'integer' },
        message: 'must be a whole number in decimal digits',
      }));
    if (errors.length > 0) {
      checked.errors = errors;
      return false;
    }
    const valid = validate(data);
    checked.errors = validate.errors;
    return valid;
  }) as ValidateFunction;
  return checked;
}
