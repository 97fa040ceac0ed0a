import { sourceFolder } from '../common/html/html-assets';

/** The portal's templates and its one script (see sourceFolder). */
export function portalFolder(name: 'views' | 'assets'): string {
  return sourceFolder(__dirname, 'portal', name);
}
