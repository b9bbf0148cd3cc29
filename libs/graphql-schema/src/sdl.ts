import type { AppConfig } from '@tessera/app-config';
import { lexicographicSortSchema, printSchema } from 'graphql/index.js';
import { buildGraphqlSchema } from './build-schema';
import { buildGraphqlModel } from './model';

/** The app's generated schema as SDL, types and members sorted, so two generations can be diffed. */
export function printGraphqlSdl(config: AppConfig): string {
  return `${printSchema(lexicographicSortSchema(buildGraphqlSchema(buildGraphqlModel(config))))}\n`;
}
