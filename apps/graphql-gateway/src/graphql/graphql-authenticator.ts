import { Injectable } from '@nestjs/common';
import { ModuleRef } from '@nestjs/core';
import type { CallerUser } from '@tessera/contracts';
import { AuthService } from '../client-api/auth/auth.service';

/** Who sends a GraphQL request: the caller identity, as functions see it and rules derive `%%user` from. */
export interface GraphqlPrincipal {
  user: CallerUser;
}

/** Checks the bearer access token of a GraphQL request for the app the URL names. */
export abstract class GraphqlAuthenticator {
  abstract authenticate(authorization: string | undefined, clientAppId: string): Promise<GraphqlPrincipal>;
}

/**
 * The client API's sessions (AuthService of client-api), found at first use through the module graph,
 * since that service belongs to the gateway's root module rather than to this feature module.
 */
@Injectable()
export class ClientApiGraphqlAuthenticator extends GraphqlAuthenticator {
  private auth?: AuthService;

  constructor(private readonly modules: ModuleRef) {
    super();
  }

  async authenticate(authorization: string | undefined, clientAppId: string): Promise<GraphqlPrincipal> {
    this.auth ??= this.modules.get(AuthService, { strict: false });
    const session = await this.auth.authenticate(authorization, 'access', clientAppId);
    return { user: await this.auth.callerOf(session) };
  }
}
