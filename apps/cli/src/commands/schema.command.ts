import type { Command } from 'commander';
import { CliError, ExitCode } from '../cli-error';
import type { CliContext } from '../context';
import { localAppId } from '../local-files';
import { realmCliLog, type RealmCliLog } from '../realm-cli-log';

/** A generated model as the admin API's `sync/client_schemas/<language>` answers it. */
interface SchemaModel {
  service_id: string;
  rule_id: string;
  model_name: string;
  collection_display_name: string;
  import_statements: string[] | null;
  schema: string;
  warnings: { error: string; error_code: string }[] | null;
  error: { error: string; error_code: string } | null;
}

interface Language {
  name: string;
  wire: string;
  display: string;
}

/** realm-cli's languages (its names, the admin API's and the names it prints), and Dart. */
const languages: Language[] = [
  { name: 'c_sharp', wire: 'C_SHARP', display: 'C#' },
  { name: 'java', wire: 'JAVA', display: 'Java' },
  { name: 'javascript', wire: 'JAVA_SCRIPT', display: 'Javascript' },
  { name: 'kotlin', wire: 'KOTLIN', display: 'Kotlin' },
  { name: 'objective_c', wire: 'OBJECTIVE_C', display: 'Objective-C' },
  { name: 'swift', wire: 'SWIFT', display: 'Swift' },
  { name: 'typescript', wire: 'TYPE_SCRIPT', display: 'Typescript' },
  { name: 'dart', wire: 'DART', display: 'Dart' },
];

const aliases: Record<string, string> = {
  'c-sharp': 'c_sharp',
  csharp: 'c_sharp',
  'c#': 'c_sharp',
  js: 'javascript',
  'objective-c': 'objective_c',
  objectivec: 'objective_c',
  obj_c: 'objective_c',
  'obj-c': 'objective_c',
  objc: 'objective_c',
  ts: 'typescript',
};

/** A language by realm-cli's name or one of its aliases (any case). */
export function parseLanguage(value: string): Language {
  const lower = value.toLowerCase();
  const name = aliases[lower] ?? lower;
  const found = languages.find((language) => language.name === name);
  if (!found) throw new CliError(`'${value}' is not a recognized language, instead try: ${languages.map((language) => language.name).join(', ')}`, ExitCode.Usage);
  return found;
}

/** A table as realm-cli prints one: indented two spaces, a rule of dashes under the headers. */
function alertTable(headers: string[], rows: string[][]): string {
  const widths = headers.map((header, column) => Math.max(header.length, ...rows.map((row) => row[column].length)));
  const line = (cells: string[]): string => `  ${cells.map((cell, column) => cell.padEnd(widths[column])).join('  ')}`;
  return [line(headers), line(widths.map((width) => '-'.repeat(width))), ...rows.map(line)].join('\n');
}

interface DatamodelsOptions {
  app?: string;
  remote?: string;
  language?: string;
  flat?: boolean;
  imports?: boolean;
  name?: string[];
}

/** What realm-cli prints for the models: each with its sorted imports, or all in one block with `--flat`. */
export function formatDatamodels(models: SchemaModel[], language: Language, options: { flat: boolean; noImports: boolean }): string {
  const snippet = (imports: string[], code: string): string => (options.noImports ? code : `${[...imports].sort().join('')}\n${code}`);
  if (options.flat) {
    const imports = [...new Set(models.flatMap((model) => model.import_statements ?? []))];
    return `The following ${language.display} data models were generated from your schema\n\n${snippet(imports, models.map((model) => model.schema).join('\n'))}\n`;
  }
  return models.map((model) => `The following ${language.display} data model was generated from your schema: ${model.model_name.toUpperCase()}\n\n${snippet(model.import_statements ?? [], model.schema)}\n`).join('');
}

const ALERT_HEADERS = ['Collection', 'Model Name', 'Error Code', 'Message', 'Link'];

/** The rows of realm-cli's tables of the models' errors and of their warnings, in ALERT_HEADERS' order. */
function alertRows(models: SchemaModel[], link: (model: SchemaModel) => string): { errors: string[][]; warnings: string[][] } {
  const row = (model: SchemaModel, alert: { error: string; error_code: string }): string[] => [model.collection_display_name, model.model_name, alert.error_code, alert.error, link(model)];
  const errors = models.filter((model) => model.error?.error && model.error.error_code).map((model) => row(model, model.error!));
  const warnings = models.flatMap((model) => (model.warnings ?? []).map((warning) => row(model, warning)));
  return { errors, warnings };
}

/** realm-cli's tables of the models' errors and warnings, with a link to each collection's schema. */
export function formatAlerts(models: SchemaModel[], link: (model: SchemaModel) => string): string {
  const headers = ALERT_HEADERS;
  const { errors, warnings } = alertRows(models, link);
  let out = '';
  if (errors.length) out += `The following collections have schemas with errors\n${alertTable(headers, errors)}\n`;
  if (warnings.length) out += `The following collections have schemas with warnings\n${alertTable(headers, warnings)}\n`;
  return out;
}

/** realm-cli's logs of the models (-f json): a text log per model, or one with `--flat`, then the tables of errors and warnings. */
export function datamodelLogs(models: SchemaModel[], language: Language, options: { flat: boolean; noImports: boolean }, link: (model: SchemaModel) => string): RealmCliLog[] {
  const snippet = (imports: string[], code: string): string => (options.noImports ? code : `${[...imports].sort().join('')}\n${code}`);
  const texts = options.flat
    ? [realmCliLog.text(`The following ${language.display} data models were generated from your schema\n\n${snippet([...new Set(models.flatMap((model) => model.import_statements ?? []))], models.map((model) => model.schema).join('\n'))}`)]
    : models.map((model) => realmCliLog.text(`The following ${language.display} data model was generated from your schema: ${model.model_name.toUpperCase()}\n\n${snippet(model.import_statements ?? [], model.schema)}`));
  const { errors, warnings } = alertRows(models, link);
  const table = (message: string, rows: string[][]): RealmCliLog => realmCliLog.table(message, ALERT_HEADERS, rows.map((row) => Object.fromEntries(ALERT_HEADERS.map((header, column) => [header, row[column]]))));
  return [
    ...texts,
    ...(errors.length ? [table('The following collections have schemas with errors', errors)] : []),
    ...(warnings.length ? [table('The following collections have schemas with warnings', warnings)] : []),
  ];
}

/** realm-cli's `schema datamodels` (alias `datamodel`): Realm SDK object models generated from the app's schemas. */
export function registerSchemaCommands(program: Command, context: () => CliContext): void {
  const schema = program.command('schema').description("work with the app's collection schemas");
  schema
    .command('datamodels')
    .alias('datamodel')
    .description('generate Realm SDK data models from your collection schemas')
    .option('-a, --app <app id>', 'the app to generate its data models (client app id, name or _id; default: app_id in ./config.json)')
    .option('--remote <app id>', 'the same as --app')
    .option('-l, --language <language>', `the language to generate data models in: ${languages.map((language) => language.name).join(', ')}`)
    .option('--flat', 'view generated data models (and associated imports) as a single code block')
    .option('--no-imports', 'view generated data models without imports')
    .option('--name <name>', 'filter generated data models by name (repeatable, or comma-separated)', (value: string, previous: string[] = []) => [...previous, ...value.split(',').map((name) => name.trim()).filter(Boolean)])
    .action(async (options: DatamodelsOptions) => {
      const ctx = context();
      let given = options.language;
      if (given === undefined && ctx.output.interactive && !ctx.output.json) {
        given = await ctx.output.ask(`Select the language you would like to generate data models in (${languages.map((language) => language.name).join(', ')}): `);
      }
      if (!given) throw new CliError(`--language is required: one of ${languages.map((language) => language.name).join(', ')}`, ExitCode.Usage);
      const language = parseLanguage(given);
      const client = await ctx.client();
      const { app, groupId } = await ctx.resolveApp(client, options.app ?? options.remote ?? (await localAppId('.')));
      let models = (await client.request<SchemaModel[]>('GET', `/groups/${groupId}/apps/${app._id}/sync/client_schemas/${language.wire}`)).body;
      if (!models.length) {
        const none = `No ${language.display} models were generated, check that you have defined a schema`;
        ctx.output.result([], none, realmCliLog.text(none));
        return;
      }
      const names = new Set(options.name ?? []);
      if (names.size) models = models.filter((model) => names.has(model.model_name));
      const baseUrl = (await ctx.url()).replace(/\/+$/, '');
      const link = (model: SchemaModel): string => `${baseUrl}/groups/${groupId}/apps/${app._id}/clusters/${model.service_id}/rules/${model.rule_id}/schema`;
      const layout = { flat: options.flat === true, noImports: options.imports === false };
      ctx.output.result(
        models,
        () => `${formatDatamodels(models, language, layout)}${formatAlerts(models, link)}`.replace(/\n$/, ''),
        () => datamodelLogs(models, language, layout, link),
      );
    });
}
