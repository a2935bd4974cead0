import type { Request } from 'express';
import { z } from 'zod';
import { entityIdTextSchema } from '../../contracts/entity-id';
import { validate } from '../../contracts/validation';

/** One schema per parameter name, built once: zod compiles a schema on first use, too costly per request. */
const schemas = new Map<string, z.ZodType<Record<string, number>>>();

function schemaFor(name: string): z.ZodType<Record<string, number>> {
  let schema = schemas.get(name);
  if (!schema) {
    schema = z.object({ [name]: entityIdTextSchema }) as unknown as z.ZodType<Record<string, number>>;
    schemas.set(name, schema);
  }
  return schema;
}

/** An id from the path in its canonical decimal form; anything else is a 400 naming the parameter. */
export function idParam(req: Request, name: string): number {
  return validate(schemaFor(name), req.params, 'path')[name]!;
}

/** The id from the path when the route has one (`PUT /x/{id}`), else undefined (`PUT /x` with a body id). */
export function optionalId(req: Request, name: string): number | undefined {
  return (req.params as Record<string, string | undefined>)[name] === undefined
    ? undefined
    : idParam(req, name);
}
