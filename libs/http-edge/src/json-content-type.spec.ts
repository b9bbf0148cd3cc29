import Fastify from 'fastify';
import { installAppServicesContentType } from './json-content-type';

describe('the content type of the answers', () => {
  const app = Fastify();
  installAppServicesContentType(app);
  app.get('/json', (_request, reply) => reply.header('content-type', 'application/json; charset=utf-8').send('{"ok":true}'));
  app.get('/empty', (_request, reply) => reply.header('content-type', 'application/json').send(''));
  app.get('/text', (_request, reply) => reply.header('content-type', 'text/plain; charset=utf-8').send('ok'));

  afterAll(() => app.close());

  it('says exactly application/json for a JSON body and keeps the body', async () => {
    const answer = await app.inject({ url: '/json' });
    expect(answer.headers['content-type']).toBe('application/json');
    expect(answer.body).toBe('{"ok":true}');
  });

  it('sends an empty body with no content type', async () => {
    const answer = await app.inject({ url: '/empty' });
    expect(answer.headers['content-type']).toBeUndefined();
    expect(answer.body).toBe('');
  });

  it('leaves other content types alone', async () => {
    expect((await app.inject({ url: '/text' })).headers['content-type']).toBe('text/plain; charset=utf-8');
  });
});
