import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Controller, Get } from '@nestjs/common';

const packageVersion = (JSON.parse(readFileSync(join(__dirname, '..', '..', 'package.json'), 'utf8')) as { version: string }).version;

/** `GET /api/private/v1.0/version` (no auth): what realm-cli's status check asks for. */
@Controller('api/private/v1.0')
export class StatusController {
  @Get('version')
  version(): { backend: { git_hash: string; version: string }; cloud_version: string } {
    return { backend: { git_hash: '', version: packageVersion }, cloud_version: packageVersion };
  }
}
