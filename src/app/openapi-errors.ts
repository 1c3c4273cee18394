import { applyDecorators, type Type } from '@nestjs/common';
import { ApiExtraModels, ApiResponse, getSchemaPath } from '@nestjs/swagger';
import { ErrorEnvelopeDto } from './error-envelope.dto.js';

/** One documented refusal: its full dotted code, and when it is answered when that helps. */
export type ErrorCase = string | readonly [code: string, when: string];

/** How a domain writes its errors: the envelope's schema and one example body. */
export interface ErrorEnvelopeDoc {
  type: Type;
  example(status: number, code: string, message: string): Record<string, unknown>;
}

/** `{error:{code,message}}`: every domain but the alternate provider. */
export const STANDARD_ENVELOPE: ErrorEnvelopeDoc = {
  type: ErrorEnvelopeDto,
  example: (_status, code, message) => ({ error: { code, message } }),
};

/**
 * Documents one error status of a route: the envelope as JSON (errors are JSON even on routes
 * whose success is audio or SSE), one named example per code (`examples`, keyed by the code, so
 * a client and test/platform/openapi-completeness.test.ts read the codes without parsing
 * prose), and a description listing them. `summary` opens the description when the codes alone
 * do not say enough.
 */
export function ApiErrors(status: number, cases: readonly ErrorCase[], options: { summary?: string; envelope?: ErrorEnvelopeDoc } = {}) {
  const envelope = options.envelope ?? STANDARD_ENVELOPE;
  const entries = cases.map((c) => (typeof c === 'string' ? { code: c, when: undefined } : { code: c[0], when: c[1] }));
  const listed = entries.map(({ code, when }) => (when ? `\`${code}\` (${when})` : `\`${code}\``)).join('; ');
  const examples = Object.fromEntries(
    // The message of a real answer says more; the example's is the code in words.
    entries.map(({ code, when }) => [code, { summary: code, description: when, value: envelope.example(status, code, code.replace(/^[a-z]+\./, '').replaceAll('_', ' ')) }]),
  );
  return applyDecorators(
    ApiExtraModels(envelope.type),
    ApiResponse({
      status,
      description: options.summary ? `${options.summary}: ${listed}` : listed,
      content: { 'application/json': { schema: { $ref: getSchemaPath(envelope.type) }, examples } },
    }),
  );
}

/** The 401 of every API-key route; `domain` is the route's error prefix (`audio`, `video`, …). */
export const ApiKeyUnauthorized = (domain: string) => ApiErrors(401, [[`${domain}.unauthorized`, 'missing, malformed, unknown or revoked API key']]);

/** The 401 of every admin route. */
export const ApiAdminUnauthorized = () => ApiErrors(401, [['admin.unauthorized', 'missing or wrong admin token']]);

/** The strict pipe's refusals on an admin route that takes a body or query parameters. */
export const ApiAdminRefusals = () => ApiErrors(400, [['admin.invalid_field', 'naming the field'], ['admin.unknown_field', 'naming the field']]);
