/** How long the admin API waits at most for this process's followers of a deployment before it answers. */
export const DEPLOYMENT_FOLLOW_WAIT_MS = 5_000;

type Follower = (appId: string) => Promise<void>;

/**
 * What this process must have done with a deployment before the deploy is answered. The deployment event
 * reaches every service asynchronously; a service in the same process whose work a client's next request
 * depends on (the function runtime's change publisher, which must watch a newly linked data source before a
 * write to it can fire the app's triggers) follows deployments here, and the admin API waits for it after
 * announcing one. A service in another process hears of the deployment only through the event.
 */
export class DeploymentFollowers {
  private readonly followers = new Set<Follower>();

  /** Registers `follower`; the answer unregisters it. */
  follow(follower: Follower): () => void {
    this.followers.add(follower);
    return () => this.followers.delete(follower);
  }

  /** Runs every follower for the app's new deployment and waits for them, at most `waitMs`; a follower's failure is its own. */
  async deployed(appId: string, waitMs = DEPLOYMENT_FOLLOW_WAIT_MS): Promise<void> {
    if (this.followers.size === 0) return;
    let timer: NodeJS.Timeout | undefined;
    const all = Promise.allSettled([...this.followers].map((follower) => follower(appId)));
    await Promise.race([all, new Promise<void>((resolve) => (timer = setTimeout(resolve, waitMs)))]);
    clearTimeout(timer);
  }
}
