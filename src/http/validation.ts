/**
 * How request schemas are checked.
 *
 * Owns: the validator settings. Bodies are JSON, so their types are checked
 * as sent (a number sent as "5" is wrong, not coerced). Query strings and path
 * parameters are text by nature, so they are coerced to the declared types.
 * Every failure is reported, not only the first, so `errors` names them all.
 */
import { Ajv, type Options } from 'ajv';
import * as addFormatsModule from 'ajv-formats';
import type { FastifyInstance, FastifySchema } from 'fastify';

// ajv-formats is CommonJS; its default export arrives wrapped under ESM.
const addFormats = (addFormatsModule as unknown as { default: (ajv: Ajv) => Ajv }).default;

const common: Options = { allErrors: true, useDefaults: true, removeAdditional: false, strict: false };

export function installValidation(app: FastifyInstance): void {
  const bodies = new Ajv({ ...common, coerceTypes: false });
  const textual = new Ajv({ ...common, coerceTypes: true });
  addFormats(bodies);
  addFormats(textual);
  app.setValidatorCompiler(({ schema, httpPart }) =>
    (httpPart === 'body' ? bodies : textual).compile(schema as FastifySchema & object),
  );
}
