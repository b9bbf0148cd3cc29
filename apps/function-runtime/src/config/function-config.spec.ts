import { FunctionRuntimeError } from '../function-runtime.error';
import { assertValidFunctionConfig, hasCanEvaluate, runAsMode, validateFunctionConfig } from './function-config';

describe('function configuration', () => {
  it('accepts the configurations realm-cli exports', () => {
    expect(validateFunctionConfig({ name: 'f', private: false })).toEqual([]);
    expect(validateFunctionConfig({ name: 'f', private: true, run_as_system: true, disable_arg_logs: true, can_evaluate: {} })).toEqual([]);
    expect(validateFunctionConfig({ name: 'dir/f', run_as_user_id: 'abc', can_evaluate: { '%%user.id': 'abc' } })).toEqual([]);
    expect(validateFunctionConfig({ name: 'f', run_as_system: false, run_as_user_id: '', run_as_user_id_script_source: 'exports = () => "x";' })).toEqual([]);
  });

  it('rejects more than one run-as setting', () => {
    expect(validateFunctionConfig({ name: 'f', run_as_system: true, run_as_user_id: 'u' })).toEqual([
      'run_as_system and run_as_user_id exclude each other: set at most one',
    ]);
    expect(validateFunctionConfig({ name: 'f', run_as_user_id: 'u', run_as_user_id_script_source: 'x' })[0]).toMatch(/exclude each other/);
    expect(validateFunctionConfig({ name: 'f', run_as_system: true, run_as_user_id_script_source: 'x' })[0]).toMatch(/exclude each other/);
  });

  it('rejects a can_evaluate expression on a private function', () => {
    expect(validateFunctionConfig({ name: 'f', private: true, can_evaluate: { '%%true': true } })).toEqual([
      'can_evaluate cannot be set on a private function: private functions take no client calls',
    ]);
  });

  it('rejects wrong types and names', () => {
    expect(validateFunctionConfig(null)).toEqual(['function configuration must be an object']);
    expect(validateFunctionConfig({ name: '' })[0]).toMatch(/name must be/);
    expect(validateFunctionConfig({ name: 'f', private: 'yes' })).toEqual(['private must be a boolean']);
    expect(validateFunctionConfig({ name: 'f', run_as_user_id: 5 })).toEqual(['run_as_user_id must be a string']);
    expect(validateFunctionConfig({ name: 'f', can_evaluate: 'true' })).toEqual(['can_evaluate must be a rule expression object']);
  });

  it('throws a configuration error naming the function', () => {
    expect(() => assertValidFunctionConfig({ name: 'pay', run_as_system: true, run_as_user_id: 'u' })).toThrow(FunctionRuntimeError);
    expect(() => assertValidFunctionConfig({ name: 'pay', run_as_system: true, run_as_user_id: 'u' })).toThrow(/invalid configuration for function 'pay'/);
  });

  it('derives the run-as mode and whether can_evaluate applies', () => {
    expect(runAsMode({ name: 'f' })).toBe('caller');
    expect(runAsMode({ name: 'f', run_as_system: true })).toBe('system');
    expect(runAsMode({ name: 'f', run_as_user_id: 'u' })).toBe('user_id');
    expect(runAsMode({ name: 'f', run_as_user_id_script_source: 's' })).toBe('user_id_script');
    expect(hasCanEvaluate({ name: 'f', can_evaluate: {} })).toBe(false);
    expect(hasCanEvaluate({ name: 'f', can_evaluate: { a: 1 } })).toBe(true);
  });
});
