import { Module } from '@nestjs/common';
import { ClientApiModule } from '@tessera/graphql-gateway';
import { AppWireEventsHandler } from './app-wire-events.handler';
import { AppWireService } from './app-wire.service';

/**
 * The apps' MongoDB wire endpoint, mounted beside the gateway (whose client API checks credentials and
 * runs remote data access) when TESSERA_WIRE_PORT is set. Connections of a user who loses access close.
 */
@Module({ imports: [ClientApiModule], controllers: [AppWireEventsHandler], providers: [AppWireService], exports: [AppWireService] })
export class AppWireModule {}
