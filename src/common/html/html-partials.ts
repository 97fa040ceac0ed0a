import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Eta } from 'eta';
import { sourceFolder } from './html-assets';

/**
 * Gives an Eta instance the templates the dashboard's and the portal's pages
 * share, by name (`include('@field-error', { id, message })`): each instance
 * reads only below its own views folder, so a shared file cannot be included
 * by path.
 */
export function withSharedPartials(eta: Eta): Eta {
  const folder = sourceFolder(__dirname, 'common/html', 'views');
  eta.loadTemplate('@field-error', readFileSync(join(folder, 'field-error.eta'), 'utf8'));
  return eta;
}
