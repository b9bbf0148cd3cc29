import { webhookValidationMethod } from './model';

describe('webhookValidationMethod', () => {
  it("reads validationMethod first, then Stitch's secretAsQueryParam, and no check when neither asks for one", () => {
    expect(webhookValidationMethod({ validationMethod: 'VERIFY_PAYLOAD', secretAsQueryParam: true, secret: 's' })).toBe('VERIFY_PAYLOAD');
    expect(webhookValidationMethod({ secretAsQueryParam: true, secret: 's' })).toBe('SECRET_AS_QUERY_PARAM');
    expect(webhookValidationMethod({ secretAsQueryParam: false, secret: 's' })).toBe('VERIFY_PAYLOAD');
    expect(webhookValidationMethod({ secretAsQueryParam: false })).toBe('NO_VALIDATION');
    expect(webhookValidationMethod({ secret: 's' })).toBe('NO_VALIDATION');
    expect(webhookValidationMethod(undefined)).toBe('NO_VALIDATION');
  });
});
