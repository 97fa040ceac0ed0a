/**
 * Imported first by the service's entry points (main.ts, ops.main.ts), so
 * that every library they load afterwards comes from the vendor bundle when
 * it matches node_modules (vendor-bundle.ts).
 */
import { useVendorBundle } from './vendor-bundle';

useVendorBundle();
