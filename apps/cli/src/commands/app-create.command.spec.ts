import { usageError } from '../testing/usage-error';
import { createCommandLine, dataSourceLinks } from './app-create.command';


describe("realm-cli's app create data sources", () => {
  it('names each data source after its --*-service-name, else after itself', () => {
    const links = dataSourceLinks({ cluster: ['Cluster0', 'Other'], clusterServiceName: ['atlas'], datalake: ['Lake'], serverlessInstance: ['Tiny'] });
    expect(links.map((link) => [link.kind, link.source, link.service.name, link.service.type])).toEqual([
      ['cluster', 'Cluster0', 'atlas', 'mongodb-atlas'],
      ['cluster', 'Other', 'Other', 'mongodb-atlas'],
      ['serverless instance', 'Tiny', 'Tiny', 'mongodb-atlas'],
      ['data lake', 'Lake', 'Lake', 'datalake'],
    ]);
    expect(links[3].service.config).toEqual({ dataLakeName: 'Lake' });
  });

  it('links a template app\'s one cluster as "mongodb-atlas" and refuses what a template app cannot link', () => {
    expect(dataSourceLinks({ template: 'web.mql.todo', cluster: ['Cluster0'], clusterServiceName: ['mine'] })[0].service.name).toBe('mongodb-atlas');
    expect(usageError(() => dataSourceLinks({ template: 't', cluster: ['A', 'B'] })).message).toContain('one cluster');
    expect(usageError(() => dataSourceLinks({ template: 't', datalake: ['L'] })).message).toContain('data lakes');
    expect(usageError(() => dataSourceLinks({ cluster: ['A'], clusterServiceName: ['x', 'y'] })).message).toContain('--cluster-service-name is given 2 times for 1 --cluster');
    expect(usageError(() => dataSourceLinks({ cluster: ['A'], datalake: ['A'] })).message).toContain('two data sources would be named "A"');
  });

  it('prints the command a dry run stands for, quoting what the shell would split', () => {
    expect(createCommandLine({ name: 'n', local: './my dir', cluster: ['A', 'B'], clusterServiceName: ['a'] })).toBe("tessera app create --name n --local './my dir' --cluster A --cluster-service-name a --cluster B");
  });
});
