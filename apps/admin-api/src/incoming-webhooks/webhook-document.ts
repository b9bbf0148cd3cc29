// The admin API v3 form of an incoming webhook (`function_source`, `options.secretAsQueryParam`) and the
// app model's (services/<svc>/incoming_webhooks/<name>/: config.json with `options.validationMethod`, and
// source.js). The model keeps one form of the check, so a GET answers what the gateway enforces.

import { type Webhook, type WebhookConfig, webhookValidationMethod } from '@tessera/app-config';
import { z } from 'zod';
import { AdminApiError, AdminApiErrorCode } from '../common/admin-api.exception';

const HTTP_METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'HEAD', 'OPTIONS', 'ANY'] as const;
const VALIDATION_METHODS = ['NO_VALIDATION', 'SECRET_AS_QUERY_PARAM', 'VERIFY_PAYLOAD'] as const;

/** Unknown members (`_id`, `last_modified` a client read back) are dropped; known ones must have their type. */
export const WebhookBodySchema = z.object({
  name: z.string().min(1),
  function_source: z.string(),
  respond_result: z.boolean(),
  run_as_authed_user: z.boolean().optional(),
  run_as_user_id: z.string().optional(),
  run_as_user_id_script_source: z.string().optional(),
  fetch_custom_user_data: z.boolean().optional(),
  create_user_on_auth: z.boolean().optional(),
  disable_arg_logs: z.boolean().optional(),
  can_evaluate: z.record(z.unknown()).optional(),
  options: z
    .object({
      secret: z.string().optional(),
      secretAsQueryParam: z.boolean().optional(),
      httpMethod: z.enum(HTTP_METHODS).optional(),
      validationMethod: z.enum(VALIDATION_METHODS).optional(),
    })
    .optional(),
});

export type WebhookBody = z.infer<typeof WebhookBodySchema>;

export function parseWebhookBody(body: unknown): WebhookBody {
  const parsed = WebhookBodySchema.safeParse(body);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new AdminApiError(AdminApiErrorCode.InvalidParameter, `invalid incoming webhook: ${issue?.path.join('.') || 'body'}: ${issue?.message ?? 'malformed'}`);
  }
  return parsed.data;
}

/**
 * The model's webhook for a body. `secretAsQueryParam` true checks the `secret` query parameter; otherwise
 * a secret is checked as the payload signature (Stitch's default); no secret, no check.
 */
export function toWebhook(body: WebhookBody, id: string | undefined): Webhook {
  const { function_source: source, options = {}, ...rest } = body;
  const secret = options.secret === '' ? undefined : options.secret;
  if (options.validationMethod !== undefined && options.secretAsQueryParam !== undefined && options.validationMethod !== validationOf(options.secretAsQueryParam, secret)) {
    throw new AdminApiError(AdminApiErrorCode.InvalidParameter, 'options.validationMethod and options.secretAsQueryParam disagree');
  }
  const validationMethod = options.validationMethod ?? validationOf(options.secretAsQueryParam, secret);
  if (validationMethod !== 'NO_VALIDATION' && !secret) throw new AdminApiError(AdminApiErrorCode.InvalidParameter, `options.secret is required to validate requests (${validationMethod})`);
  const config: WebhookConfig = {
    ...(id ? { id } : {}),
    ...rest,
    options: { ...(options.httpMethod ? { httpMethod: options.httpMethod } : {}), validationMethod, ...(secret ? { secret } : {}) },
  };
  return { config, source };
}

function validationOf(secretAsQueryParam: boolean | undefined, secret: string | undefined): string {
  if (secretAsQueryParam === true) return 'SECRET_AS_QUERY_PARAM';
  return secret ? 'VERIFY_PAYLOAD' : 'NO_VALIDATION';
}

/** The admin API form of a stored webhook, whichever form of the check its files use. */
export function webhookDocument(webhook: Webhook): Record<string, unknown> {
  const { id, options = {}, ...rest } = webhook.config;
  const { secretAsQueryParam: _stitchForm, ...stored } = options;
  const validationMethod = webhookValidationMethod(options);
  return {
    _id: id,
    ...rest,
    function_source: webhook.source,
    options: { ...stored, validationMethod, secretAsQueryParam: validationMethod === 'SECRET_AS_QUERY_PARAM' },
  };
}
