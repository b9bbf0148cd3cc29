import { Injectable } from '@nestjs/common';
import { ModuleRef } from '@nestjs/core';
import type { Caller } from '@tessera/contracts';
import { decodeEjson } from '@tessera/messaging';
import type { RuleUser } from '@tessera/rules';
import { AuthService } from '../client-api/auth/auth.service';

/** Who sends a GraphQL request: as rules see the user, and as functions see the caller. */
export interface GraphqlPrincipal {
  user: RuleUser;
  caller: Caller;
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
    const caller = await this.auth.callerOf(session);
    return { caller, user: ruleUserOf(caller) };
  }
}

/** `%%user` from the function caller: custom data and metadata back to BSON values. */
export function ruleUserOf(caller: Caller): RuleUser {
  if (caller.type !== 'user') return { id: 'system', type: 'system' };
  const { user } = caller;
  return {
    id: user.id,
    ...(user.type ? { type: user.type } : {}),
    ...(user.data ? { data: decodeEjson(user.data) as Record<string, unknown> } : {}),
    ...(user.customData ? { custom_data: decodeEjson(user.customData) as Record<string, unknown> } : {}),
    ...(user.identities ? { identities: user.identities } : {}),
  };
}
