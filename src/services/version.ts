import pkg from '../../package.json' with { type: 'json' };
import type { CoreContext } from '../context.ts';

export const BACKEND_VERSION: string = pkg.version;

export class VersionService {
  constructor(private readonly ctx: CoreContext) {}

  current(): { backend: string } {
    return { backend: BACKEND_VERSION };
  }
}
