import { sourceFolder } from '../common/html/html-assets';

/** The dashboard's templates (see sourceFolder). */
export function dashboardFolder(name: 'views'): string {
  return sourceFolder(__dirname, 'dashboard', name);
}
