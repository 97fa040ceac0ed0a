import { Injectable } from '@nestjs/common';
import { DataSource, EntityManager } from 'typeorm';
import { OrganiserEntity } from './entities/organiser.entity';

export interface OrganiserRow {
  id: string;
  name: string;
  placeholder: boolean;
}

/**
 * All SQL on `organiser`. Other contexts call OrganisersService (its reads
 * take the caller's transaction) or compose placeholder-organisers.sql-fragment.ts.
 */
@Injectable()
export class OrganiserRepository {
  constructor(private readonly dataSource: DataSource) {}

  async insert(organiser: OrganiserRow): Promise<void> {
    await this.dataSource.getRepository(OrganiserEntity).insert({ ...organiser });
  }

  async exists(organiserId: string, db: EntityManager | DataSource = this.dataSource): Promise<boolean> {
    const rows = await db.query<unknown[]>('SELECT 1 FROM organiser WHERE id = $1', [organiserId]);
    return rows.length > 0;
  }

  async list(): Promise<OrganiserRow[]> {
    const rows = await this.dataSource.getRepository(OrganiserEntity).find({ order: { createdAt: 'ASC', id: 'ASC' } });
    return rows.map(({ id, name, placeholder }) => ({ id, name, placeholder }));
  }
}
