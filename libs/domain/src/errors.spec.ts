import { CodedError, TesseraError } from './errors';

class SampleError extends TesseraError {
  readonly errorCode = 'FunctionNotFound';
  readonly httpStatus = 404;
}

describe('TesseraError', () => {
  it('renders the App Services error body', () => {
    const error = new SampleError("function not found: 'x'");
    expect(error.toBody()).toEqual({ error: "function not found: 'x'", error_code: 'FunctionNotFound' });
    expect(error.toBody('http://h/logs')).toEqual({ error: "function not found: 'x'", error_code: 'FunctionNotFound', link: 'http://h/logs' });
    expect(error.name).toBe('SampleError');
  });
});

enum SampleCode {
  Missing = 'Missing',
  Clash = 'Clash',
}

class CodedSample extends CodedError<SampleCode> {
  constructor(code: SampleCode, message: string) {
    super(code, message, { [SampleCode.Missing]: 404, [SampleCode.Clash]: 409 });
  }
}

describe('CodedError', () => {
  it('takes its status from the feature table', () => {
    expect(new CodedSample(SampleCode.Missing, 'gone')).toMatchObject({ errorCode: 'Missing', httpStatus: 404, name: 'CodedSample' });
    expect(new CodedSample(SampleCode.Clash, 'taken').toBody()).toEqual({ error: 'taken', error_code: 'Clash' });
  });
});
