// Moved to the database layer, which must not import common/; importers here keep working until this folder retires.
export * from '../../database/prepared-statement';
