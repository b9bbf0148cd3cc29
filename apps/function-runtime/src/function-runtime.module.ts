import { Module, type DynamicModule, type ModuleMetadata } from '@nestjs/common';
import { FUNCTION_RUNTIME_CONFIG, FunctionRuntimeService, type FunctionRuntimeConfig } from './function-runtime.service';

/**
 * Provides FunctionRuntimeService. The app wires its ports (datastore, values, users, HTTP, log store, rule
 * evaluator) here; the transport (message handlers) is wired separately and only injects the service.
 */
@Module({})
export class FunctionRuntimeModule {
  static register(config: FunctionRuntimeConfig): DynamicModule {
    return {
      module: FunctionRuntimeModule,
      providers: [{ provide: FUNCTION_RUNTIME_CONFIG, useValue: config }, FunctionRuntimeService],
      exports: [FunctionRuntimeService],
    };
  }

  static registerAsync(config: {
    imports?: ModuleMetadata['imports'];
    inject?: Array<string | symbol | (abstract new (...args: never[]) => unknown)>;
    useFactory: (...args: never[]) => FunctionRuntimeConfig | Promise<FunctionRuntimeConfig>;
  }): DynamicModule {
    return {
      module: FunctionRuntimeModule,
      imports: config.imports ?? [],
      providers: [{ provide: FUNCTION_RUNTIME_CONFIG, useFactory: config.useFactory, inject: config.inject ?? [] }, FunctionRuntimeService],
      exports: [FunctionRuntimeService],
    };
  }
}
