import { TesseraError } from './errors';

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
