import type { CoreContext } from '../context.ts';
import { VersionService } from './version.ts';

/** The domain services; each area adds itself here and registers its jobs and schedules. */
export interface Services {
  version: VersionService;
}

export function createServices(core: CoreContext): Services {
  return {
    version: new VersionService(core),
  };
}
