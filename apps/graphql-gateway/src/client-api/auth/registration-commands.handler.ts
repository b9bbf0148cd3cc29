import { Controller } from '@nestjs/common';
import { type CommandRequest, type CommandResponseInput, Subjects } from '@tessera/contracts';
import { CommandHandler, type MessageContext, propagationHeaders } from '@tessera/messaging';
import { UserpassService } from './userpass.service';

/** What other services ask of the email/password provider over the bus (the admin API's `send_confirm`). */
@Controller()
export class RegistrationCommandsHandler {
  constructor(private readonly userpass: UserpassService) {}

  @CommandHandler(Subjects.AppsRegistrationSendConfirmation)
  sendConfirmation(request: CommandRequest<typeof Subjects.AppsRegistrationSendConfirmation>, context: MessageContext): Promise<CommandResponseInput<typeof Subjects.AppsRegistrationSendConfirmation>> {
    return this.userpass.sendConfirmation(request, propagationHeaders(context));
  }
}
