import { DATA_API_CONFIG_FILE, dataApiConfigOf, dataApiConfigProblems, withDataApiDefaults } from './data-api-config';

const appWith = (text: string) => ({ extraFiles: new Map([[DATA_API_CONFIG_FILE, new TextEncoder().encode(text)]]) });

describe('the Data API configuration', () => {
  it("fills in App Services' defaults and keeps fields it does not know", () => {
    expect(withDataApiDefaults({ versions: ['v1'], extra: 1 })).toEqual({
      extra: 1,
      disabled: false,
      versions: ['v1'],
      return_type: 'JSON',
      create_user_on_auth: false,
      run_as_system: false,
      run_as_user_id: '',
      run_as_user_id_script_source: '',
      validation_method: 'NO_VALIDATION',
      secret_name: '',
      log_function_arguments: false,
      can_evaluate: {},
    });
  });

  it('names every field App Services would refuse', () => {
    expect(dataApiConfigProblems({ disabled: false, versions: ['v1'], return_type: 'JSON', validation_method: 'NO_VALIDATION', can_evaluate: { '%%user.id': 'x' } })).toEqual([]);
    expect(dataApiConfigProblems([]).map((problem) => problem.path)).toEqual(['']);
    const problems = dataApiConfigProblems({ disabled: 'yes', versions: ['v1', 'v9'], return_type: 'XML', run_as_user_id: 3, validation_method: 'VERIFY_PAYLOAD', can_evaluate: [] });
    expect(problems.map((problem) => problem.path).sort()).toEqual(['can_evaluate', 'disabled', 'return_type', 'run_as_user_id', 'secret_name', 'versions']);
    expect(dataApiConfigProblems({ validation_method: 'SIGNED' }).map((problem) => problem.path)).toEqual(['validation_method']);
  });

  it('reads an empty validation_method, as App Services exported it, as no validation', () => {
    const exported = { disabled: false, versions: ['v1'], return_type: 'JSON', create_user_on_auth: false, run_as_system: false, run_as_user_id: '', run_as_user_id_script_source: '', validation_method: '', secret_name: '', log_function_arguments: false };
    expect(dataApiConfigProblems(exported)).toEqual([]);
    expect(withDataApiDefaults(exported).validation_method).toBe('NO_VALIDATION');
  });

  it('reads the deployed file once, and reports a file that cannot be used instead of guessing', () => {
    expect(dataApiConfigOf({ extraFiles: new Map() })).toBeUndefined();
    const app = appWith('{"disabled":false,"versions":["v1"],"run_as_system":true}');
    const first = dataApiConfigOf(app);
    expect(first).toMatchObject({ config: { run_as_system: true, return_type: 'JSON' } });
    expect(dataApiConfigOf(app)).toBe(first);
    expect(dataApiConfigOf(appWith('{"versions":'))).toEqual({ invalid: expect.stringMatching(/is not JSON/) as unknown });
    expect(dataApiConfigOf(appWith('{"versions":"v1"}'))).toEqual({ invalid: expect.stringMatching(/versions/) as unknown });
  });
});
