import { Body, Controller, Delete, Headers, HttpCode, Param, Put } from '@nestjs/common';
import { AuthService, type ClientSession } from '../auth/auth.service';
import { ClientApiError, ClientApiErrorCode } from '../client-api.error';
import { objectBody } from '../ejson-body';

/** realm-core's push client: a user registers (PUT) or drops (DELETE) a device token for a push service. */
@Controller('api/client/v2.0/app/:appId/push/providers/:service/registration')
export class PushController {
  constructor(private readonly auth: AuthService) {}

  @Put()
  @HttpCode(204)
  async register(@Param('appId') appId: string, @Param('service') service: string, @Headers('authorization') authorization: string | undefined, @Body() body: unknown): Promise<void> {
    const session = await this.sessionFor(appId, service, authorization);
    const token = objectBody(body)['registrationToken'];
    if (typeof token !== 'string' || token === '') throw new ClientApiError(ClientApiErrorCode.MissingParameter, "'registrationToken' must be a non-empty string");
    await session.app.users.setPushRegistration(session.user._id, service, token);
  }

  @Delete()
  @HttpCode(204)
  async deregister(@Param('appId') appId: string, @Param('service') service: string, @Headers('authorization') authorization: string | undefined): Promise<void> {
    const session = await this.sessionFor(appId, service, authorization);
    await session.app.users.deletePushRegistration(session.user._id, service);
  }

  private async sessionFor(appId: string, service: string, authorization: string | undefined): Promise<ClientSession> {
    const session = await this.auth.authenticate(authorization, 'access', appId);
    if (!session.app.config.services.some((candidate) => candidate.config.name === service)) throw new ClientApiError(ClientApiErrorCode.ServiceNotFound, `service not found: '${service}'`);
    return session;
  }
}
