// Custom resolvers as the admin API shows them (`_id`, `function_id`) and as the app's files hold them
// (graphql/custom_resolvers/<type>_<field>.json with `function_name`): the translation both ways, the
// checks App Services made of a resolver body, and the resolvers' ids. Plain functions over the model.

import { type AppConfig, type CustomResolver, stableId } from '@tessera/app-config';
import { z } from 'zod';
import { AdminApiError, AdminApiErrorCode } from '../common/admin-api.exception';

const FORMATS = ['scalar', 'scalar-list', 'generated', 'generated-list', 'custom'] as const;
type Format = (typeof FORMATS)[number];

const TypeSchema = z.union([z.string().min(1), z.record(z.unknown())]);

/** The body of a create or modify: App Services' `CustomResolver` (its `_id` is ignored: the path names the resolver). */
const ResolverBodySchema = z
  .object({
    _id: z.string().optional(),
    on_type: z.string({ required_error: 'on_type is required' }).min(1, 'on_type is required'),
    field_name: z.string({ required_error: 'field_name is required' }).min(1, 'field_name is required'),
    function_id: z.string().min(1).optional(),
    function_name: z.string().min(1).optional(),
    input_type: TypeSchema.optional(),
    input_type_format: z.enum(FORMATS).optional(),
    payload_type: TypeSchema.optional(),
    payload_type_format: z.enum(FORMATS).optional(),
  })
  .strict();

type ResolverBody = z.infer<typeof ResolverBodySchema>;

/** The first problem zod found, as `path: message`, for an error body a person can act on. */
export function firstIssue(error: z.ZodError): string {
  const issue = error.issues[0];
  if (!issue) return 'invalid body';
  if (issue.code === 'unrecognized_keys') return `unknown field${issue.keys.length > 1 ? 's' : ''} ${issue.keys.map((key) => `"${key}"`).join(', ')}`;
  const path = issue.path.join('.');
  return path && !issue.message.startsWith(path) ? `${path}: ${issue.message}` : issue.message;
}

/**
 * A resolver file from a request body: the function named by id (as the UI sends it) or by name, and each
 * type agreeing with its format, as the reference says (a scalar or generated type is a name, a custom
 * one a JSON schema; a type needs its format and a format its type).
 */
export function resolverFromBody(app: AppConfig, body: unknown): CustomResolver {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) throw new AdminApiError(AdminApiErrorCode.BadRequest, 'the request body must be a custom resolver object');
  const parsed = ResolverBodySchema.safeParse(body);
  if (!parsed.success) throw new AdminApiError(AdminApiErrorCode.InvalidParameter, `invalid custom resolver: ${firstIssue(parsed.error)}`);
  const given: ResolverBody = parsed.data;
  const resolver: CustomResolver = { on_type: given.on_type, field_name: given.field_name, function_name: functionNameOf(app, given) };
  for (const part of ['input', 'payload'] as const) {
    const type = given[`${part}_type`];
    const format = given[`${part}_type_format`];
    if (type === undefined && format === undefined) continue;
    if (type === undefined) throw new AdminApiError(AdminApiErrorCode.InvalidParameter, `${part}_type_format "${String(format)}" needs a ${part}_type`);
    if (format === undefined) throw new AdminApiError(AdminApiErrorCode.InvalidParameter, `${part}_type needs a ${part}_type_format (one of ${FORMATS.join(', ')})`);
    checkAgreement(part, type, format);
    resolver[`${part}_type`] = type;
    resolver[`${part}_type_format`] = format;
  }
  return resolver;
}

function checkAgreement(part: string, type: string | Record<string, unknown>, format: Format): void {
  if (format === 'custom' && typeof type !== 'object') throw new AdminApiError(AdminApiErrorCode.InvalidParameter, `a custom ${part}_type must be a JSON schema object`);
  if (format !== 'custom' && typeof type !== 'string') throw new AdminApiError(AdminApiErrorCode.InvalidParameter, `a ${format} ${part}_type must be a type name; use ${part}_type_format "custom" for a JSON schema`);
}

function functionNameOf(app: AppConfig, given: ResolverBody): string {
  if (given.function_id !== undefined) {
    const fn = app.functions.find((candidate) => candidate.config.id === given.function_id);
    if (!fn) throw new AdminApiError(AdminApiErrorCode.FunctionNotFound, `function not found: '${given.function_id}'`);
    if (given.function_name !== undefined && given.function_name !== fn.config.name) {
      throw new AdminApiError(AdminApiErrorCode.InvalidParameter, `function_id '${given.function_id}' names function "${fn.config.name}", not "${given.function_name}"`);
    }
    return fn.config.name;
  }
  if (given.function_name === undefined) throw new AdminApiError(AdminApiErrorCode.InvalidParameter, 'a custom resolver needs a function_id (or function_name)');
  if (!app.functions.some((candidate) => candidate.config.name === given.function_name)) {
    throw new AdminApiError(AdminApiErrorCode.FunctionNotFound, `function not found: '${given.function_name}'`);
  }
  return given.function_name;
}

/** Where the resolver shows in the schema: two resolvers may not share it. */
function fieldKey(resolver: { on_type?: unknown; field_name?: unknown }): string {
  return `${String(resolver.on_type)}.${String(resolver.field_name)}`;
}

/**
 * The resolver's id: the one its file keeps, else the stable id of its field, as the other resources get
 * theirs (the same app always shows the same ids). Kept in the file from the first change on, so it
 * survives a change of the resolver's type or field name.
 */
export function resolverId(app: AppConfig, resolver: CustomResolver): string {
  return typeof resolver['id'] === 'string' ? resolver['id'] : stableId(app.settings.name, 'custom_resolver', fieldKey(resolver));
}

/** Writes each resolver's id into its file, so ids shown before the first change stay the ids after it. */
export function keepResolverIds(app: AppConfig): CustomResolver[] {
  const resolvers = app.graphql?.customResolvers ?? [];
  for (const resolver of resolvers) resolver['id'] = resolverId(app, resolver);
  return resolvers;
}

/** A fresh id for a new resolver: its field's stable id, unless a renamed resolver already keeps that one. */
export function newResolverId(app: AppConfig, resolver: CustomResolver): string {
  const taken = new Set((app.graphql?.customResolvers ?? []).map((existing) => resolverId(app, existing)));
  let id = stableId(app.settings.name, 'custom_resolver', fieldKey(resolver));
  for (let n = 1; taken.has(id); n++) id = stableId(app.settings.name, 'custom_resolver', `${fieldKey(resolver)}#${n}`);
  return id;
}

export function findResolver(app: AppConfig, id: string): CustomResolver {
  const resolver = (app.graphql?.customResolvers ?? []).find((candidate) => resolverId(app, candidate) === id);
  if (!resolver) throw new AdminApiError(AdminApiErrorCode.CustomResolverNotFound, `custom resolver not found: '${id}'`);
  return resolver;
}

/** Refuses a second resolver on the same type and field (`except`: the one being modified). */
export function checkFieldFree(app: AppConfig, resolver: CustomResolver, except?: CustomResolver): void {
  const clash = (app.graphql?.customResolvers ?? []).find((existing) => existing !== except && fieldKey(existing) === fieldKey(resolver));
  if (clash) {
    throw new AdminApiError(AdminApiErrorCode.CustomResolverAlreadyExists, `a custom resolver for field "${resolver.field_name}" on type "${resolver.on_type}" already exists`);
  }
}

/** The admin API's form: `_id` and the function's id beside its name. */
export function resolverToWire(app: AppConfig, resolver: CustomResolver): Record<string, unknown> {
  const { id: _id, ...rest } = resolver;
  const fn = app.functions.find((candidate) => candidate.config.name === resolver.function_name);
  return { _id: resolverId(app, resolver), ...(fn?.config.id ? { function_id: fn.config.id } : {}), ...rest };
}
