import type { ApiBody } from '@nestjs/swagger';

/** @nestjs/swagger does not export its SchemaObject type from the package root. */
export type SchemaObject = Exclude<Extract<Parameters<typeof ApiBody>[0], { schema: unknown }>['schema'], { $ref: string }>;

/** Schemas written by hand (not DTO classes), added to `components.schemas` by setupOpenApi. */
const namedSchemas = new Map<string, SchemaObject>();

/**
 * Registers a hand-written body schema under `name` and returns its `$ref`, so bodies are named
 * components like the DTOs' (a client generator then names the type) and never inline.
 */
export function namedSchema(name: string, schema: SchemaObject): { $ref: string } {
  const known = namedSchemas.get(name);
  if (known && known !== schema) throw new Error(`OpenAPI schema ${name} is registered twice`);
  namedSchemas.set(name, schema);
  return { $ref: `#/components/schemas/${name}` };
}

export const handWrittenSchemas = (): Record<string, SchemaObject> => Object.fromEntries(namedSchemas);
