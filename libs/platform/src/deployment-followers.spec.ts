import { DeploymentFollowers } from './deployment-followers';

describe('DeploymentFollowers', () => {
  it('answers once every follower has taken the deployment, each with the app id', async () => {
    const followers = new DeploymentFollowers();
    const seen: string[] = [];
    let release!: () => void;
    followers.follow(async (appId) => {
      await new Promise<void>((resolve) => (release = resolve));
      seen.push(`slow ${appId}`);
    });
    followers.follow(async (appId) => {
      seen.push(`fast ${appId}`);
    });
    let answered = false;
    const deployed = followers.deployed('app-1').then(() => (answered = true));
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(answered).toBe(false);
    release();
    await deployed;
    expect(seen.sort()).toEqual(['fast app-1', 'slow app-1']);
  });

  it('waits no longer than its bound, and a failing follower fails nobody else', async () => {
    const followers = new DeploymentFollowers();
    followers.follow(() => new Promise<void>(() => undefined));
    followers.follow(() => Promise.reject(new Error('feed store down')));
    const started = Date.now();
    await expect(followers.deployed('app-1', 50)).resolves.toBeUndefined();
    expect(Date.now() - started).toBeLessThan(5_000);
  });

  it('forgets a follower that stopped following', async () => {
    const followers = new DeploymentFollowers();
    const seen: string[] = [];
    const stop = followers.follow(async (appId) => {
      seen.push(appId);
    });
    await followers.deployed('a');
    stop();
    await followers.deployed('b');
    expect(seen).toEqual(['a']);
  });
});
