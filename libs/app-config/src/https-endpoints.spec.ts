import { endpointRouteProblem, httpsEndpoints, httpsEndpointsProblems, HTTPS_ENDPOINTS_FILE } from './https-endpoints';
import { emptyApp } from './model';

describe('HTTPS endpoint configuration', () => {
  it('accepts the routes App Services served and refuses traversal, empty segments and the Data API paths', () => {
    for (const route of ['/orders', '/my/nested/route', '/v1.2/items_~x-y']) expect(endpointRouteProblem(route), route).toBeUndefined();
    for (const route of ['', 'orders', '/', '/a//b', '/../x', '/a/./b', '/a b', '/a%2e', '/data/v1/action/find', '/data/beta']) expect(endpointRouteProblem(route), route).toBeDefined();
  });

  it('names every problem of an endpoint array with its JSON path and rule', () => {
    const problems = httpsEndpointsProblems(
      [
        { route: '/a', http_method: 'GET', function_name: 'f' },
        { route: '/a', http_method: '*', function_name: 'f' },
        { route: '/b', http_method: 'TRACE', function_name: 'missing', validation_method: 'VERIFY_PAYLOAD', return_type: 'XML', disabled: 'no' },
      ],
      new Set(['f']),
    );
    expect(problems.map((problem) => `${problem.path} ${problem.rule}`)).toEqual([
      '[1].http_method endpoint.route.duplicate',
      '[2].http_method endpoint.http_method',
      '[2].function_name endpoint.function.missing',
      '[2].secret_name endpoint.secret_name.required',
      '[2].return_type endpoint.return_type',
      '[2].disabled endpoint.type',
    ]);
    expect(httpsEndpointsProblems({})).toEqual([{ path: '', rule: 'file.shape', message: 'the endpoint configuration must be an array of endpoints' }]);
  });

  it('reads a file holding null as no endpoints, as realm-cli wrote and read it', () => {
    expect(httpsEndpointsProblems(null)).toEqual([]);
    const app = emptyApp('a');
    app.extraFiles.set(HTTPS_ENDPOINTS_FILE, new TextEncoder().encode('null\n'));
    expect(httpsEndpoints(app)).toEqual([]);
  });

  it('reads the deployed endpoints from http_endpoints/config.json', () => {
    const app = emptyApp('a');
    expect(httpsEndpoints(app)).toEqual([]);
    app.extraFiles.set(HTTPS_ENDPOINTS_FILE, new TextEncoder().encode('[{"route":"/a","http_method":"GET","function_name":"f"},{"route":3}]'));
    expect(httpsEndpoints(app)).toEqual([{ route: '/a', http_method: 'GET', function_name: 'f' }]);
  });
});
