import type { AppConfig } from '@tessera/app-config';
import { z } from 'zod';

/** Where an export keeps the Data API's configuration (the app-config library keeps it verbatim). */
export const DATA_API_CONFIG_FILE = 'http_endpoints/data_api_config.json';

const ValidationMethod = z.enum(['NO_VALIDATION', 'SECRET_AS_QUERY_PARAM', 'VERIFY_PAYLOAD']);

/** `http_endpoints/data_api_config.json` as App Services exported it (admin API `DataApiConfig`). */
const DataApiConfigSchema = z
  .object({
    disabled: z.boolean().default(false),
    versions: z.array(z.string()).default(['v1']),
    return_type: z.enum(['JSON', 'EJSON']).default('JSON'),
    create_user_on_auth: z.boolean().default(false),
    run_as_system: z.boolean().default(false),
    run_as_user_id: z.string().default(''),
    run_as_user_id_script_source: z.string().default(''),
    validation_method: ValidationMethod.default('NO_VALIDATION'),
    secret_name: z.string().default(''),
    log_function_arguments: z.boolean().default(false),
  })
  .passthrough();

export type DataApiConfig = z.infer<typeof DataApiConfigSchema>;
export type EndpointValidationMethod = z.infer<typeof ValidationMethod>;

/** The configuration file read: its settings, or why it cannot be used. */
export type DataApiConfigFile = { config: DataApiConfig } | { invalid: string };

/**
 * The app's Data API configuration, or undefined when the app has none (the Data API was never enabled).
 * A file that does not parse or has the wrong shape is reported as `invalid`: push validates only that it
 * is an object, and such an app must not be served with guessed settings.
 */
export function dataApiConfigOf(app: AppConfig): DataApiConfigFile | undefined {
  // A deployed configuration object is never changed: read its file once.
  if (parsedConfigs.has(app)) return parsedConfigs.get(app);
  const config = readConfig(app);
  parsedConfigs.set(app, config);
  return config;
}

const parsedConfigs = new WeakMap<AppConfig, DataApiConfigFile | undefined>();

function readConfig(app: AppConfig): DataApiConfigFile | undefined {
  const bytes = app.extraFiles.get(DATA_API_CONFIG_FILE);
  if (!bytes) return undefined;
  let value: unknown;
  try {
    value = JSON.parse(Buffer.from(bytes).toString('utf8'));
  } catch {
    return { invalid: `${DATA_API_CONFIG_FILE} is not JSON` };
  }
  const parsed = DataApiConfigSchema.safeParse(value);
  if (!parsed.success) return { invalid: `${DATA_API_CONFIG_FILE}: ${parsed.error.issues.map((issue) => `${issue.path.join('.') || '(root)'} ${issue.message}`).join('; ')}` };
  return { config: parsed.data };
}
