// Custom HTTPS endpoints (http_endpoints/config.json of an export; https_endpoints/ in the App Services CLI's
// layout, moved here on read): their model, how to read them from an app, and what makes one invalid. Pure:
// the gateway serves what `httpsEndpoints` returns, the reader and the admin API refuse what
// `httpsEndpointProblems` names.

import { bytesToText, isPlainObject, parseJson, show } from './json';
import type { AppConfig } from './model';

/** Where the endpoint array lives in the app's files. */
export const HTTPS_ENDPOINTS_FILE = 'http_endpoints/config.json';

export const ENDPOINT_HTTP_METHODS: readonly string[] = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE', '*'];
export const ENDPOINT_VALIDATION_METHODS: readonly string[] = ['NO_VALIDATION', 'SECRET_AS_QUERY_PARAM', 'VERIFY_PAYLOAD'];
export const ENDPOINT_RETURN_TYPES: readonly string[] = ['JSON', 'EJSON'];

/** One item of http_endpoints/config.json. */
export interface HttpsEndpointConfig {
  id?: string;
  route: string;
  http_method: string;
  function_name: string;
  function_id?: string;
  validation_method?: string;
  secret_name?: string;
  respond_result?: boolean;
  fetch_custom_user_data?: boolean;
  create_user_on_auth?: boolean;
  return_type?: string;
  disabled?: boolean;
  [extra: string]: unknown;
}

export interface EndpointProblem {
  /** JSON path inside the endpoint (`route`, `http_method`, ...). */
  path: string;
  rule: string;
  message: string;
}

/** A route: `/` then segments of URL-safe characters; no empty, `.` or `..` segment. */
const ROUTE_SEGMENT = /^[A-Za-z0-9_\-.~]+$/;
const MAX_ROUTE_LENGTH = 512;
/** Paths the Data API answers at `/app/<id>/endpoint/data/...`: an endpoint there could never be reached. */
const DATA_API_ROUTE = /^\/data\/(v1|beta)(\/|$)/;

/** What is wrong with a route, or undefined when it is one App Services would serve. */
export function endpointRouteProblem(route: unknown): string | undefined {
  if (typeof route !== 'string' || route === '') return 'route is required';
  if (!route.startsWith('/')) return 'route must begin with a forward slash';
  if (route.length > MAX_ROUTE_LENGTH) return `route must be at most ${MAX_ROUTE_LENGTH} characters`;
  if (route === '/') return 'route must name at least one path segment';
  const segments = route.slice(1).replace(/\/$/, '').split('/');
  for (const segment of segments) {
    if (segment === '' || segment === '.' || segment === '..' || !ROUTE_SEGMENT.test(segment)) {
      return `route segment ${show(segment)} is not allowed: use letters, digits, '-', '_', '.' and '~' (no empty, '.' or '..' segments)`;
    }
  }
  if (DATA_API_ROUTE.test(route)) return 'routes under /data/v1 and /data/beta belong to the Data API';
  return undefined;
}

/** Problems of one endpoint; `functions` are the app's function names (undefined: not checked). */
export function httpsEndpointProblems(endpoint: unknown, functions?: ReadonlySet<string>): EndpointProblem[] {
  if (!isPlainObject(endpoint)) return [{ path: '', rule: 'file.shape', message: 'each endpoint must be an object' }];
  const problems: EndpointProblem[] = [];
  const add = (path: string, rule: string, message: string): void => {
    problems.push({ path, rule, message });
  };
  const routeProblem = endpointRouteProblem(endpoint.route);
  if (routeProblem) add('route', 'endpoint.route', routeProblem);
  if (typeof endpoint.http_method !== 'string' || !ENDPOINT_HTTP_METHODS.includes(endpoint.http_method)) {
    add('http_method', 'endpoint.http_method', `http_method must be one of ${ENDPOINT_HTTP_METHODS.join(', ')}`);
  }
  if (typeof endpoint.function_name !== 'string' || endpoint.function_name === '') add('function_name', 'endpoint.function.required', 'function_name is required');
  else if (functions && !functions.has(endpoint.function_name)) {
    add('function_name', 'endpoint.function.missing', `endpoint ${show(endpoint.http_method ?? '')} ${show(endpoint.route ?? '')} names function "${show(endpoint.function_name)}", which this app does not define`);
  }
  const validation = endpoint.validation_method ?? 'NO_VALIDATION';
  if (typeof validation !== 'string' || !ENDPOINT_VALIDATION_METHODS.includes(validation)) {
    add('validation_method', 'endpoint.validation_method', `validation_method must be one of ${ENDPOINT_VALIDATION_METHODS.join(', ')}`);
  } else if (validation !== 'NO_VALIDATION' && (typeof endpoint.secret_name !== 'string' || endpoint.secret_name === '')) {
    add('secret_name', 'endpoint.secret_name.required', `validation_method ${validation} needs secret_name, the secret requests are checked against`);
  }
  if (endpoint.secret_name !== undefined && typeof endpoint.secret_name !== 'string') add('secret_name', 'endpoint.type', 'secret_name must be a string');
  if (endpoint.return_type !== undefined && (typeof endpoint.return_type !== 'string' || !ENDPOINT_RETURN_TYPES.includes(endpoint.return_type))) {
    add('return_type', 'endpoint.return_type', `return_type must be one of ${ENDPOINT_RETURN_TYPES.join(', ')}`);
  }
  for (const key of ['respond_result', 'fetch_custom_user_data', 'create_user_on_auth', 'disabled']) {
    if (endpoint[key] !== undefined && typeof endpoint[key] !== 'boolean') add(key, 'endpoint.type', `${key} must be a boolean`);
  }
  return problems;
}

/**
 * Problems of the whole array: each endpoint's, and two endpoints answering the same route and method. A
 * file holding `null` has no endpoints: realm-cli wrote that for an app without any, and read it back so.
 */
export function httpsEndpointsProblems(endpoints: unknown, functions?: ReadonlySet<string>): EndpointProblem[] {
  if (endpoints === null) return [];
  if (!Array.isArray(endpoints)) return [{ path: '', rule: 'file.shape', message: 'the endpoint configuration must be an array of endpoints' }];
  const problems: EndpointProblem[] = [];
  const methodsByRoute = new Map<string, Set<string>>();
  endpoints.forEach((endpoint: unknown, i) => {
    for (const problem of httpsEndpointProblems(endpoint, functions)) problems.push({ ...problem, path: problem.path ? `[${i}].${problem.path}` : `[${i}]` });
    if (!isPlainObject(endpoint) || typeof endpoint.route !== 'string' || typeof endpoint.http_method !== 'string') return;
    const methods = methodsByRoute.get(endpoint.route) ?? new Set<string>();
    methodsByRoute.set(endpoint.route, methods);
    if (methods.has(endpoint.http_method) || (methods.size > 0 && (endpoint.http_method === '*' || methods.has('*')))) {
      problems.push({ path: `[${i}].http_method`, rule: 'endpoint.route.duplicate', message: `another endpoint already answers ${endpoint.http_method} ${endpoint.route}` });
    }
    methods.add(endpoint.http_method);
  });
  return problems;
}

/** The app's endpoints as deployed (an absent or unreadable file: none; the reader refused bad ones). */
export function httpsEndpoints(app: Pick<AppConfig, 'extraFiles'>): HttpsEndpointConfig[] {
  const bytes = app.extraFiles.get(HTTPS_ENDPOINTS_FILE);
  if (!bytes) return [];
  const parsed = parseJson(bytesToText(bytes));
  if (!parsed.ok || !Array.isArray(parsed.value)) return [];
  return parsed.value.filter((item): item is HttpsEndpointConfig => isPlainObject(item) && typeof item.route === 'string' && typeof item.http_method === 'string' && typeof item.function_name === 'string');
}
