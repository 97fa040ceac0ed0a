import { sourceFolder } from '../common/html/html-assets';

/** The dashboard's templates and scripts (see sourceFolder). */
export function dashboardFolder(name: 'views' | 'assets'): string {
  return sourceFolder(__dirname, 'dashboard', name);
}
