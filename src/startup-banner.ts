import { join } from 'node:path';
import type { DemoKeys } from './demo/demo-seed';

export interface StartupFacts {
  /** Null on a worker (SERVICE_ROLE=worker). */
  publicUrl: string | null;
  /** Null when the internal API is off. */
  adminUrl: string | null;
  /** The embedded default's data folder, or null when `DATABASE_URL` names the database. */
  embeddedDataDir: string | null;
  /** Set only on the start that generated the admin token: it is shown then and never again. */
  generatedAdminToken: string | null;
  /** ADMIN_TOKEN is set: it, not the data folder's file, is the token. */
  adminTokenFromSetting: boolean;
  /** This instance as the registry lists it (GET /internal/instances): what matches a row to this process. */
  instance: { id: string; pid: number; host: string };
  /** The demo data created on a first start, with its keys (shown once). */
  demo: DemoKeys | null;
  readyInMs: number;
}

/** The human-facing lines printed once the service listens: where to connect, and what was generated. */
export function startupBanner(facts: StartupFacts): string[] {
  const { publicUrl, adminUrl, embeddedDataDir: dataDir } = facts;
  const lines = [
    publicUrl === null
      ? 'Public API    off (SERVICE_ROLE=worker: the delivery worker and the scheduled jobs)'
      : `Public API    ${publicUrl}/v1   (reference: ${publicUrl}/docs, ${publicUrl}/openapi.json)`,
    adminUrl === null ? 'Internal API  off (set ADMIN_TOKEN to enable it)' : `Internal API  ${adminUrl}/internal`,
    `Database      ${dataDir === null ? 'DATABASE_URL' : `embedded PostgreSQL in ${join(dataDir, 'pg')}`}`,
    `Instance      ${facts.instance.id}   (pid ${facts.instance.pid} on ${facts.instance.host})`,
  ];
  if (dataDir !== null) {
    const tokenFile = join(dataDir, 'admin-token');
    lines.push(
      facts.adminTokenFromSetting
        ? `Admin token   from ADMIN_TOKEN (not ${tokenFile})`
        : facts.generatedAdminToken === null
          ? `Admin token   kept in ${tokenFile}`
          : `Admin token   ${facts.generatedAdminToken}   (generated now, shown once; kept in ${tokenFile})`,
    );
  }
  if (facts.demo !== null) {
    const demo = facts.demo;
    lines.push(
      '',
      'First start: demo data created. These keys are shown once and cannot be recovered:',
      `  organiser ${demo.organiserId}  key ${demo.organiserKey}`,
      `  venue     ${demo.venueId}  key ${demo.venueKey}`,
    );
    if (publicUrl !== null)
      lines.push('', `Try: curl -H 'Authorization: Bearer ${demo.organiserKey}' ${publicUrl}/v1/me`);
  }
  lines.push(`Ready in ${facts.readyInMs} ms.`);
  return lines;
}
